//go:build race

package main

// raceEnabled makes the crash test build its binary with -race too, so it
// reuses the packages the test binary was just compiled with.
const raceEnabled = true
