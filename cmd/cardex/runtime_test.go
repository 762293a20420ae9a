package main

import (
	"runtime"
	"testing"
)

func TestServeProcs(t *testing.T) {
	env := func(v string) func(string) string {
		return func(k string) string {
			if k == "GOMAXPROCS" {
				return v
			}
			return ""
		}
	}
	for _, tc := range []struct {
		env                string
		current            int
		wantCores, wantRun int
	}{
		{"", 1, 1, 8},
		{"", 2, 2, 8},
		{"", 8, 8, 8},
		{"", 32, 32, 32},
		{"2", 2, 2, 2}, // the operator's choice stands
		{"1", 1, 1, 1},
	} {
		cores, procs := serveProcs(env(tc.env), tc.current)
		if cores != tc.wantCores || procs != tc.wantRun {
			t.Errorf("GOMAXPROCS=%q, runtime chose %d: cores %d, procs %d; want %d, %d",
				tc.env, tc.current, cores, procs, tc.wantCores, tc.wantRun)
		}
	}
}

func TestServeGC(t *testing.T) {
	if pct, ok := serveGC(func(string) string { return "" }); !ok || pct != 80 {
		t.Fatalf("without GOGC: %d, %t; want 80, true", pct, ok)
	}
	if _, ok := serveGC(func(k string) string {
		if k == "GOGC" {
			return "off"
		}
		return ""
	}); ok {
		t.Fatal("the operator's GOGC was overridden")
	}
}

func TestServeCArenas(t *testing.T) {
	unset := func(string) string { return "" }
	for cores, want := range map[int]int{1: 2, 2: 2, 8: 8} {
		if n, ok := serveCArenas(unset, cores); !ok || n != want {
			t.Errorf("%d cores: %d, %t; want %d, true", cores, n, ok, want)
		}
	}
	if _, ok := serveCArenas(func(k string) string {
		if k == "MALLOC_ARENA_MAX" {
			return "4"
		}
		return ""
	}, 2); ok {
		t.Fatal("the operator's MALLOC_ARENA_MAX was overridden")
	}
}

// On glibc (the Debian image and CI), malloc accepts the arena limit and
// a trim of the C heap.
func TestCHeapTuning(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the C heap is tuned on Linux only")
	}
	if !cHeapTunable() {
		t.Skip("malloc is not glibc's")
	}
	if !limitCArenas(runtime.GOMAXPROCS(0)) {
		t.Fatal("mallopt(M_ARENA_MAX) refused")
	}
	trimCHeap() // returns whether anything was freed: either is right
}

// BenchmarkTrimCHeap is the cost of one trim of this process's C heap.
func BenchmarkTrimCHeap(b *testing.B) {
	for b.Loop() {
		trimCHeap()
	}
}
