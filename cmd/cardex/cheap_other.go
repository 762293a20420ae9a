//go:build !linux || !cgo

package main

// Outside Linux with cgo, the C heap's allocator is left as it is
// (cheap_glibc.go tunes glibc's).

func cHeapTunable() bool    { return false }
func limitCArenas(int) bool { return false }
func trimCHeap() bool       { return false }
