package zapread

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/mapping"
	zap "github.com/blevesearch/zapx/v17"
)

// storedField is one field as a visitor saw it.
type storedField struct {
	field string
	typ   byte
	value string
	pos   string
}

func visitAll(visit func(uint64, func(string, byte, []byte, []uint64) bool) error, num uint64) ([]storedField, error) {
	var out []storedField
	err := visit(num, func(field string, typ byte, value []byte, pos []uint64) bool {
		out = append(out, storedField{field, typ, string(value), fmt.Sprint(pos)})
		return true
	})
	return out, err
}

// storedIndex writes n documents of every stored shape (text, numbers,
// booleans, arrays of strings and of objects, values longer than one
// read) and reopens the index, so its segments are files.
func storedIndex(t *testing.T, n int) bleve.Index {
	t.Helper()
	path := filepath.Join(t.TempDir(), "idx")
	m := mapping.NewIndexMapping()
	m.StoreDynamic = true
	idx, err := bleve.NewUsing(path, m, IndexType, IndexType, nil)
	if err != nil {
		t.Fatal(err)
	}
	for part := range 3 { // three batches: three segments
		b := idx.NewBatch()
		for i := part * n / 3; i < (part+1)*n/3; i++ {
			doc := map[string]any{
				"name":        fmt.Sprintf("agent %d", i),
				"description": strings.Repeat(fmt.Sprintf("word%d ", i), 1+i%7),
				"tags":        []string{"finance", fmt.Sprintf("t%d", i%5), "ünïcode ✓"},
				"score":       float64(i) / 3,
				"live":        i%2 == 0,
				"skills": []map[string]any{
					{"name": "invoices", "examples": []string{"pay", fmt.Sprint(i)}},
					{"name": "reports", "examples": []string{"monthly"}},
				},
			}
			if i%10 == 3 {
				// Longer than the first read's page.
				doc["long"] = strings.Repeat("x", 9000+i)
			}
			if err := b.Index(fmt.Sprintf("doc-%04d", i), doc); err != nil {
				t.Fatal(err)
			}
		}
		if err := idx.Batch(b); err != nil {
			t.Fatal(err)
		}
	}
	if err := idx.Close(); err != nil {
		t.Fatal(err)
	}
	idx, err = bleve.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = idx.Close() })
	return idx
}

// Every field of every document, read from the file, is what Bleve's own
// reader gives: same fields in the same order, types, values and array
// positions.
func TestStoredReadsWhatBleveReads(t *testing.T) {
	idx := storedIndex(t, 90)
	snap, done := snapshotOf(t, idx)
	defer done()
	if len(snap.Segments()) < 2 {
		t.Fatalf("%d segments, want several", len(snap.Segments()))
	}
	docs, long := 0, 0
	for _, ss := range snap.Segments() {
		st, ok := ss.Segment().OpenStored()
		if !ok {
			t.Fatal("a persisted segment's stored fields cannot be opened")
		}
		for d := range ss.Segment().Count() {
			want, err := visitAll(ss.VisitDocument, d)
			if err != nil {
				t.Fatal(err)
			}
			got, err := visitAll(st.Visit, d)
			if err != nil {
				t.Fatalf("document %d: %v", d, err)
			}
			if !slices.Equal(got, want) {
				t.Fatalf("document %d:\n got %v\nwant %v", d, got, want)
			}
			if len(want) < 8 || want[0].field != "_id" {
				t.Fatalf("document %d has %d fields: %v", d, len(want), want)
			}
			for _, f := range want {
				if len(f.value) > 4096 {
					long++
				}
			}
			docs++
		}
		// Past the last document: nothing, as Bleve's reader.
		if got, err := visitAll(st.Visit, ss.Segment().Count()); err != nil || len(got) != 0 {
			t.Fatalf("past the end: %v %v", got, err)
		}
	}
	if docs != 90 || long != 9 {
		t.Fatalf("compared %d documents, %d long values; want 90 and 9", docs, long)
	}
}

// A visitor that returns false stops the walk, the _id included.
func TestStoredVisitStops(t *testing.T) {
	idx := storedIndex(t, 9)
	snap, done := snapshotOf(t, idx)
	defer done()
	st, ok := snap.Segments()[0].Segment().OpenStored()
	if !ok {
		t.Fatal("not opened")
	}
	for _, stopAt := range []int{1, 2, 4} {
		seen := 0
		err := st.Visit(0, func(string, byte, []byte, []uint64) bool {
			seen++
			return seen < stopAt
		})
		if err != nil || seen != stopAt {
			t.Fatalf("stop at %d: visited %d, %v", stopAt, seen, err)
		}
	}
}

// A segment still in memory has no file: OpenStored says so and the
// caller reads through the snapshot.
func TestStoredOfASegmentInMemory(t *testing.T) {
	idx, err := bleve.NewUsing(filepath.Join(t.TempDir(), "idx"), mapping.NewIndexMapping(), IndexType, IndexType,
		map[string]any{"unsafe_batch": false})
	if err != nil {
		t.Fatal(err)
	}
	defer idx.Close()
	if err := idx.Index("a", map[string]any{"name": "x"}); err != nil {
		t.Fatal(err)
	}
	snap, done := snapshotOf(t, idx)
	defer done()
	for _, ss := range snap.Segments() {
		// Bleve persists in the background: the segment is either still
		// in memory (no file to read) or a file (which must read).
		_, inMemory := ss.Segment().s.(*zap.SegmentBase)
		st, ok := ss.Segment().OpenStored()
		if ok == inMemory {
			t.Fatalf("segment in memory %v, stored fields opened %v", inMemory, ok)
		}
		if ok {
			got, err := visitAll(st.Visit, 0)
			if err != nil || len(got) == 0 || got[0].value != "a" {
				t.Fatalf("persisted segment: %v, %v", got, err)
			}
		}
	}
	var none Segment
	if _, ok := none.OpenStored(); ok {
		t.Fatal("the zero Segment has stored fields")
	}
}

// A file whose footer does not describe a segment is refused, and stored
// offsets past the end are an error, not a panic.
func TestStoredRefusesBadFiles(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, b []byte) *os.File {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
		f, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = f.Close() })
		return f
	}
	footer := func(numDocs, storedIndex uint64, version, idLen uint32) []byte {
		b := make([]byte, footerLen)
		be := func(off int, v uint64, n int) {
			for i := range n {
				b[off+i] = byte(v >> (8 * (n - 1 - i)))
			}
		}
		be(0, uint64(idLen), 4)
		be(4, numDocs, 8)
		be(12, storedIndex, 8)
		be(32, uint64(version), 4)
		return b
	}
	if _, err := readFooter(write("short", []byte("zap")), nil); err == nil {
		t.Fatal("a 3-byte file was read")
	}
	if _, err := readFooter(write("v16", footer(0, 0, 16, 0)), nil); err == nil {
		t.Fatal("version 16 was read")
	}
	if _, err := readFooter(write("callbacks", footer(0, 0, FormatVersion, 3)), nil); err == nil {
		t.Fatal("a file written through callbacks was read")
	}
	if _, err := readFooter(write("toomany", append(make([]byte, 16), footer(3, 0, FormatVersion, 0)...)), nil); err == nil {
		t.Fatal("three offsets in 16 bytes were read")
	}
	// One document whose offset points past the data.
	body := []byte{0, 0, 0, 0, 0, 0, 0, 200}
	st, err := readFooter(write("past", append(body, footer(1, 0, FormatVersion, 0)...)), []string{"_id"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := visitAll(st.Visit, 0); err != errCorrupt {
		t.Fatalf("offset past the end: %v", err)
	}
	// One document whose lengths run past the data.
	body = append([]byte{0, 0, 0, 0, 0, 0, 0, 8}, 0x7f, 0x7f, 1, 2)
	st, err = readFooter(write("long", append(body, footer(1, 0, FormatVersion, 0)...)), []string{"_id"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := visitAll(st.Visit, 0); err != errCorrupt {
		t.Fatalf("lengths past the end: %v", err)
	}
}
