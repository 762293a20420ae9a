//go:build race

package main

// raceEnabled builds the server under test with -race too.
const raceEnabled = true
