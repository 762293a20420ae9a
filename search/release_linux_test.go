//go:build linux

package search

import (
	"bufio"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// resident is how many kB of the files under dir named …suffix are
// resident in this process, and how many are mapped (smaps).
func resident(t *testing.T, dir, suffix string) (kb int, mapped int) {
	t.Helper()
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	in := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		fields := strings.Fields(line)
		if len(fields) > 0 && strings.Contains(fields[0], "-") && !strings.HasSuffix(fields[0], ":") {
			// a mapping's header: address perms offset dev inode [path]
			in = len(fields) >= 6 && strings.HasPrefix(fields[5], dir) && strings.HasSuffix(fields[5], suffix)
			continue
		}
		if in && len(fields) >= 2 {
			n, _ := strconv.Atoi(fields[1])
			switch fields[0] {
			case "Rss:":
				kb += n
			case "Size:":
				mapped += n
			}
		}
	}
	return kb, mapped
}

var touched int

// releaseMappedPages drops the resident pages of the read-only shared
// mappings of segment files under the directory, and only those; the data
// reads back the same afterwards.
func TestReleaseMappedPages(t *testing.T) {
	dir := t.TempDir()
	data := make([]byte, 1<<20)
	for i := range data {
		data[i] = byte(i * 7)
	}
	mapFile := func(name string) []byte {
		path := dir + "/" + name
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		m, err := syscall.Mmap(int(f.Fd()), 0, len(data), syscall.PROT_READ, syscall.MAP_SHARED)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = syscall.Munmap(m) })
		for i := 0; i < len(m); i += 4096 {
			touched += int(m[i]) // read every page in
		}
		return m
	}
	seg := mapFile("000000000001.zap")
	other := mapFile("root.bolt")
	kb, mapped := resident(t, dir, ".zap")
	if mapped != 1024 || kb < 1000 {
		t.Fatalf("before: %d of %d kB resident, want the whole touched segment", kb, mapped)
	}
	releaseMappedPages(dir)
	if kb, _ := resident(t, dir, ".zap"); kb != 0 {
		t.Fatalf("after: %d kB of the segment still resident", kb)
	}
	if kb, _ := resident(t, dir, ".bolt"); kb < 1000 {
		t.Fatalf("the release dropped %d kB of a file that is not a segment", 1024-kb)
	}
	if string(seg) != string(data) || string(other) != string(data) {
		t.Fatal("the mapped data changed")
	}
}

// The indexer gives back the pages of the segment files its table builds
// read, however small the build: during a probe round every batch adds a
// segment, and the pages of some forty small segments stayed resident.
func TestIndexerReleasesPagesOfEveryBuild(t *testing.T) {
	x, ix, g := syncedThree(t)
	if st, err := x.Segments(); err != nil || st.Segments == 0 {
		t.Fatalf("segments %+v, %v: the test needs file segments", st, err)
	}
	forgetTables(g)
	if err := ix.Sync(t.Context()); err != nil {
		t.Fatal(err)
	}
	rebuilt := knownTables(g)
	if rebuilt == 0 {
		t.Fatal("the sync decoded no segment")
	}
	if kb, mapped := resident(t, g.path, ".zap"); mapped == 0 || kb != 0 {
		t.Fatalf("after decoding %d segments of three agents: %d of %d kB of segment files resident, want none of some", rebuilt, kb, mapped)
	}
	// The pages read back unchanged: a query still finds the agents.
	if r := mustSearch(t, x, Query{Q: "invoice", Scope: scopeAdmin}); r.TotalSize == 0 {
		t.Fatal("no agent found after the release")
	}
}

// A page's hits are read from the segment files without mapping them: once
// the first query has decoded what it decodes once per segment (standing,
// scope), later pages leave no page of any segment resident, however many
// hits they read. Reading them through the mapping had kept 66–88 MiB of
// segment pages resident at 100,000 agents (docs/benchmarks.md "Memory").
func TestPageHitsMapNoSegmentPage(t *testing.T) {
	x, ix, g := syncedThree(t)
	forgetTables(g)
	if err := ix.Sync(t.Context()); err != nil {
		t.Fatal(err)
	}
	files := 0
	g.facets.mu.Lock()
	for _, st := range g.facets.segs {
		if st.text != nil && st.text.stored != nil {
			files++
		}
	}
	g.facets.mu.Unlock()
	if files == 0 {
		t.Fatal("no decoded segment reads its stored fields from its file")
	}
	first := mustSearch(t, x, Query{Q: "invoices", Scope: scopeAdmin})
	releaseMappedPages(g.path)
	for _, q := range []string{"agent one", "agent two", "reads", "helps"} {
		r := mustSearch(t, x, Query{Q: q, Scope: scopeAdmin})
		if len(r.Hits) == 0 || r.Hits[0].Name == "" || r.Hits[0].Description != "helps with invoices" {
			t.Fatalf("%q: hits %+v", q, r.Hits)
		}
		if kb, _ := resident(t, g.path, ".zap"); kb != 0 {
			t.Fatalf("after %q: %d kB of segment files resident, want none", q, kb)
		}
	}
	if len(first.Hits) != 3 || len(first.Hits[0].Matches) == 0 {
		t.Fatalf("first query: %+v", first.Hits)
	}
}
