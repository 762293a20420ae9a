package zapread

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/mapping"
)

// snapshotOf opens a reader of idx and returns its segments and the func
// that closes it.
func snapshotOf(t *testing.T, idx bleve.Index) (*Snapshot, func()) {
	t.Helper()
	adv, err := idx.Advanced()
	if err != nil {
		t.Fatal(err)
	}
	r, err := adv.Reader()
	if err != nil {
		t.Fatal(err)
	}
	snap, ok := SnapshotOf(r)
	if !ok {
		_ = r.Close()
		t.Fatalf("Bleve's index reader is %T, not the scorch snapshot search's tables read: "+
			"a Bleve upgrade changed the index type (search/zapread)", r)
	}
	return snap, func() { _ = r.Close() }
}

// formatsOf returns the formats of idx's segments, failing on any the
// tables were not written for.
func formatsOf(t *testing.T, idx bleve.Index) []string {
	t.Helper()
	snap, done := snapshotOf(t, idx)
	defer done()
	var out []string
	for _, ss := range snap.Segments() {
		typ, v := ss.Segment().Format()
		out = append(out, fmt.Sprintf("%s %d", typ, v))
		if !ss.Segment().Supported() {
			t.Errorf("Bleve now writes segments of format %s version %d; search's text and facet tables "+
				"(search/texttable.go, search/facettable.go) were written for %s version %d and fall back to "+
				"Bleve's searchers on any other: check how they read postings, locations and doc values "+
				"against the new format (search/zapread), then raise FormatVersion", typ, v, FormatType, FormatVersion)
		}
	}
	if len(out) == 0 {
		t.Fatal("no segments")
	}
	return out
}

// The segment format the tables were written for is the one Bleve writes,
// both for a segment still in memory and for one read back from disk:
// this fails loudly, naming the new format, when a Bleve upgrade changes
// it (the tables would otherwise silently fall back to Bleve's searchers).
func TestSegmentFormat(t *testing.T) {
	path := filepath.Join(t.TempDir(), "idx")
	idx, err := bleve.NewUsing(path, mapping.NewIndexMapping(), IndexType, IndexType, nil)
	if err != nil {
		t.Fatal(err)
	}
	b := idx.NewBatch()
	for i := range 20 {
		if err := b.Index(fmt.Sprintf("d%02d", i), map[string]any{"name": fmt.Sprintf("agent %d", i), "tags": "finance"}); err != nil {
			t.Fatal(err)
		}
	}
	if err := idx.Batch(b); err != nil {
		t.Fatal(err)
	}
	t.Logf("written: %v", formatsOf(t, idx))
	if err := idx.Close(); err != nil {
		t.Fatal(err)
	}
	idx, err = bleve.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer idx.Close()
	t.Logf("read back: %v", formatsOf(t, idx))
}

// A segment of a type the tables do not know is not Supported.
func TestUnknownSegmentType(t *testing.T) {
	var s Segment
	if typ, v := s.Format(); typ != "<nil>" || v != 0 || s.Supported() {
		t.Fatalf("zero Segment: %s %d supported=%v", typ, v, s.Supported())
	}
}
