package main

import "testing"

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
	if pct, ok := serveGC(func(string) string { return "" }); !ok || pct != 50 {
		t.Fatalf("without GOGC: %d, %t; want 50, true", pct, ok)
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
