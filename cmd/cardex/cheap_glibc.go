//go:build linux && cgo

package main

/*
#include <stdlib.h>
#ifdef __GLIBC__
#include <malloc.h>
static int cardex_limit_arenas(int n) { return mallopt(M_ARENA_MAX, n); }
static int cardex_trim_heap(void) { return malloc_trim(0); }
static int cardex_glibc(void) { return 1; }
#else
static int cardex_limit_arenas(int n) { (void)n; return 0; }
static int cardex_trim_heap(void) { return 0; }
static int cardex_glibc(void) { return 0; }
#endif
*/
import "C"

// The C heap is SQLite's (its page caches, statements and the rows it
// returns), allocated by glibc's malloc from the threads cgo calls run
// on. glibc gives each thread that finds the others' arenas busy an arena
// of its own, up to eight per core, and keeps what is freed inside each:
// after a catalogue import `cardex serve` held about 100 MiB of C heap in
// a dozen arenas, against 35 MiB for a server that had only served
// queries (docs/benchmarks.md "Memory").

// cHeapTunable reports whether the process's malloc is glibc's, which
// limitCArenas and trimCHeap act on.
func cHeapTunable() bool { return C.cardex_glibc() == 1 }

// limitCArenas lets malloc create at most n arenas; false when it could
// not (another malloc).
func limitCArenas(n int) bool { return C.cardex_limit_arenas(C.int(n)) == 1 }

// trimCHeap returns the free memory of every arena to the system; true
// when some was returned.
func trimCHeap() bool { return C.cardex_trim_heap() == 1 }
