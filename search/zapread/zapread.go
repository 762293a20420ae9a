// Package zapread is the one part of Cardex that reads below Bleve's public
// API: the segments of a scorch index snapshot (zap files). search decodes
// each segment's postings and doc values once into its text and facet
// tables (search/texttable.go, search/facettable.go), reads a hit's stored
// fields by document number (search/rank.go, search/collect.go; from the
// segment's file, not its mapping, where it can: stored.go) and
// compacts a rebuilt generation (search/rebuild.go) through this seam, and
// imports no Bleve internals itself (search/imports_test.go).
//
// The tables were written for one segment format, Format; a segment of
// any other (a Bleve upgrade that writes a new zap version, another
// segment type) is not Supported, and search answers through Bleve's own
// searchers instead (search/fallback.go). TestSegmentFormat fails, naming
// the format Bleve now writes, when an upgrade changes it.
package zapread

import (
	"context"
	"fmt"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/index/scorch"
	"github.com/blevesearch/bleve/v2/index/scorch/mergeplan"
	index "github.com/blevesearch/bleve_index_api"
	segment "github.com/blevesearch/scorch_segment_api/v2"
	zap "github.com/blevesearch/zapx/v17"
)

// The segment format the tables were written for and tested on: zap
// version 17, the format Bleve v2.6 writes.
const (
	FormatType    = "zap"
	FormatVersion = 17
)

// IndexType is the index type every generation is built with (scorch).
const IndexType = scorch.Name

// Snapshot is the segments of one index reader.
type Snapshot struct {
	segs []SegmentSnapshot
}

// SnapshotOf returns r's segments; false when r is not a scorch snapshot.
func SnapshotOf(r index.IndexReader) (*Snapshot, bool) {
	snap, ok := r.(*scorch.IndexSnapshot)
	if !ok {
		return nil, false
	}
	ss := snap.Segments()
	out := &Snapshot{segs: make([]SegmentSnapshot, len(ss))}
	for i, s := range ss {
		out.segs[i] = SegmentSnapshot{s}
	}
	return out, true
}

// Segments are the snapshot's segments in document-number order.
func (s *Snapshot) Segments() []SegmentSnapshot { return s.segs }

// SegmentSnapshot is one segment as a snapshot sees it: with the documents
// deleted since it was written.
type SegmentSnapshot struct{ ss *scorch.SegmentSnapshot }

// Segment is the segment itself.
func (s SegmentSnapshot) Segment() Segment { return Segment{s.ss.Segment()} }

// Count is the number of live (not deleted) documents.
func (s SegmentSnapshot) Count() uint64 { return s.ss.Count() }

// Deleted are the numbers of the deleted documents; nil when none.
func (s SegmentSnapshot) Deleted() *roaring.Bitmap { return s.ss.Deleted() }

// VisitDocument calls visit with every stored field of document num until
// visit returns false.
func (s SegmentSnapshot) VisitDocument(num uint64, visit func(field string, typ byte, value []byte, pos []uint64) bool) error {
	return s.ss.VisitDocument(num, visit)
}

// Segment is one immutable segment. Segments compare equal when they are
// the same segment, so a Segment keys a per-segment cache.
type Segment struct{ s segment.Segment }

// Count is the number of documents written to the segment, deleted ones
// included.
func (s Segment) Count() uint64 { return s.s.Count() }

// Format is the segment's type and version ("zap", 17); an unknown
// segment type is its Go type and version 0.
func (s Segment) Format() (typ string, version uint32) {
	switch v := s.s.(type) {
	case *zap.Segment:
		return zap.Type, v.Version()
	case *zap.SegmentBase: // written in memory, not persisted yet
		return zap.Type, zap.Version
	}
	return fmt.Sprintf("%T", s.s), 0
}

// Supported reports whether the segment is of the format the tables were
// written for.
func (s Segment) Supported() bool {
	typ, v := s.Format()
	return typ == FormatType && v == FormatVersion
}

// Posting is one document of a term's postings.
type Posting struct{ p segment.Posting }

// Number is the document's number in its segment.
func (p Posting) Number() uint64 { return p.p.Number() }

// Frequency is how often the term occurs in the document's field (when
// asked for).
func (p Posting) Frequency() uint64 { return p.p.Frequency() }

// Norm is the field's length norm (when asked for).
func (p Posting) Norm() float64 { return p.p.Norm() }

// Locations are the locations of the term in the document (when asked
// for).
func (p Posting) Locations() Locations { return Locations{p.p.Locations()} }

// Locations are a posting's term locations, read by index (no callback:
// the tables read millions of them).
type Locations struct{ l []segment.Location }

// Len is the number of locations.
func (l Locations) Len() int { return len(l.l) }

// At is location i: its position and array positions.
func (l Locations) At(i int) (pos uint64, arrayPositions []uint64) {
	return l.l[i].Pos(), l.l[i].ArrayPositions()
}

// WalkField visits every term of field, in order, and the postings of the
// terms for which term returns a visitor (with frequencies and norms when
// freq is set, locations when locs is).
func (s Segment) WalkField(field string, freq, locs bool, term func(string) func(Posting)) error {
	dict, err := s.s.Dictionary(field)
	if err != nil {
		return err
	}
	var pl segment.PostingsList
	var pi segment.PostingsIterator
	it := dict.AutomatonIterator(nil, nil, nil)
	for {
		de, err := it.Next()
		if err != nil {
			return err
		}
		if de == nil {
			return nil
		}
		visit := term(de.Term)
		if visit == nil {
			continue
		}
		if pl, err = dict.PostingsList([]byte(de.Term), nil, pl); err != nil {
			return err
		}
		pi = pl.Iterator(freq, freq, locs, pi)
		if err := eachPosting(pi, visit); err != nil {
			return err
		}
	}
}

// EachDoc calls visit with the number of every document holding value in
// the keyword field.
func (s Segment) EachDoc(field, value string, visit func(doc uint64)) error {
	dict, err := s.s.Dictionary(field)
	if err != nil {
		return err
	}
	pl, err := dict.PostingsList([]byte(value), nil, nil)
	if err != nil {
		return err
	}
	return eachPosting(pl.Iterator(false, false, false, nil), func(p Posting) { visit(p.Number()) })
}

func eachPosting(pi segment.PostingsIterator, visit func(Posting)) error {
	for {
		p, err := pi.Next()
		if err != nil {
			return err
		}
		if p == nil {
			return nil
		}
		visit(Posting{p})
	}
}

// DocValues returns a reader of the segment's doc values of fields, one
// document at a time; false when the segment keeps none.
func (s Segment) DocValues(fields []string) (*DocValues, bool) {
	dv, ok := s.s.(segment.DocValueVisitable)
	if !ok {
		return nil, false
	}
	return &DocValues{dv: dv, fields: fields}, true
}

// DocValues reads the doc values of some fields, document by document.
type DocValues struct {
	dv     segment.DocValueVisitable
	fields []string
	state  segment.DocVisitState
}

// Visit calls visit with every doc value of document d in the fields.
func (v *DocValues) Visit(d uint64, visit func(field string, term []byte)) error {
	var err error
	v.state, err = v.dv.VisitDocValues(d, v.fields, visit, v.state)
	return err
}

// ExternalID is the id of document num of r (the snapshot's numbering).
func ExternalID(r index.IndexReader, num uint64) (string, error) {
	return r.ExternalID(index.NewIndexInternalID(nil, num))
}

// BuildMergePlan is the default merge policy with a tier wide enough that
// no merge is planned while a generation is built.
func BuildMergePlan() map[string]any {
	o := mergeplan.DefaultMergePlanOptions
	return map[string]any{
		"MaxSegmentsPerTier":   1 << 20,
		"MaxSegmentSize":       o.MaxSegmentSize,
		"TierGrowth":           o.TierGrowth,
		"SegmentsPerMergeTask": o.SegmentsPerMergeTask,
		"FloorSegmentSize":     o.FloorSegmentSize,
		"ReclaimDeletesWeight": o.ReclaimDeletesWeight,
	}
}

// Compact merges the freshly built index down to as few segments as the
// merge policy allows (one or two on 100k agents instead of ~20): every
// query then opens one term dictionary and postings list per segment
// instead of twenty, about 13% less CPU per query for ~8 CPU-s more
// rebuild. Later writes add small segments that Bleve merges as usual.
func Compact(ctx context.Context, idx bleve.Index) error {
	adv, err := idx.Advanced()
	if err != nil {
		return err
	}
	s, ok := adv.(*scorch.Scorch)
	if !ok {
		return nil
	}
	r, err := s.Reader()
	if err != nil {
		return err
	}
	snap, _ := r.(*scorch.IndexSnapshot)
	few := snap == nil || len(snap.Segments()) <= 1
	if err := r.Close(); err != nil || few {
		// One segment is all a merge could make (Bleve's plan never
		// rewrites a lone segment, deletions or not), and a force merge
		// waits for the merger's next round even when nothing is to do.
		return err
	}
	one := mergeplan.SingleSegmentMergePlanOptions
	one.SegmentsPerMergeTask = 1 << 20 // every segment in one task: one pass
	if err := s.ForceMerge(ctx, &one); err != nil {
		return fmt.Errorf("compact: %w", err)
	}
	return nil
}
