//go:build !race

package bench

// RaceEnabled is true in a -race build: tests then build the server they
// run with -race too.
const RaceEnabled = false
