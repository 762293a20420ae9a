package zapread

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"sync"

	zap "github.com/blevesearch/zapx/v17"
	"github.com/golang/snappy"
)

// Stored reads a persisted segment's stored fields with positioned reads
// of its file (pread) instead of through the segment's memory map.
//
// Why: a search page reads the stored fields of its twenty hits, each a
// few hundred bytes somewhere in the segment's stored section, and every
// first touch of a mapped page maps the pages around it as well (the
// kernel's fault-around, 64 KiB). After a few thousand unique queries
// most of the section is mapped into the process: 66–88 MiB of resident
// memory at 100,000 agents, counted against the server's RSS, for bytes
// that are read once per hit. A pread copies the few bytes asked for out
// of the page cache and maps nothing; the page cache keeps them for the
// next read all the same.
//
// The layout read here is zap version 17's (FormatVersion), written by
// Bleve's persister: a footer at the end of the file (… stored index
// offset, number of documents, sections offset, chunk mode, version,
// CRC), a stored index of one 8-byte big-endian offset per document, and
// at each offset the uvarint lengths of the document's field directory
// (meta) and data, then both. The directory is the uvarint length of the
// _id value, then per field its number, type, offset and length in the
// uncompressed data and its array positions; the data is the _id value
// followed by the rest, snappy-compressed. TestStoredReadsWhatBleveReads
// compares every field of every document with Bleve's own reader.
type Stored struct {
	f           *os.File // closed by its own finalizer once the Stored is unreachable
	fields      []string // field number → name
	storedIndex uint64   // offset of the stored index
	numDocs     uint64
	end         uint64 // end of the data the footer describes

	// The stored index, read in one piece by the first Visit (8 bytes a
	// document: 800 kB at 100,000): one read per document after that
	// instead of two.
	index    sync.Once
	offsets  []byte // big-endian uint64s
	indexErr error
}

// zap v17's footer, from the end of the file: CRC (4), version (4), chunk
// mode (4), sections index offset (8), stored index offset (8), number of
// documents (8), length of the file writer's id (4), preceded by that id.
const footerLen = 4 + 4 + 4 + 8 + 8 + 8 + 4

// errCorrupt is what a read past what the footer describes returns.
var errCorrupt = errors.New("zapread: stored fields past the end of the segment")

// OpenStored opens the segment's file for its stored fields; false when
// the segment is not a persisted zap v17 file (a segment still in memory,
// a file another writer encrypted or compressed through Bleve's file
// callbacks), or when its file cannot be opened any more (merged away and
// removed since the snapshot was taken): VisitDocument reads those.
func (s Segment) OpenStored() (*Stored, bool) {
	seg, ok := s.s.(*zap.Segment)
	if !ok || seg.Version() != FormatVersion {
		return nil, false
	}
	f, err := os.Open(seg.Path())
	if err != nil {
		return nil, false
	}
	st, err := readFooter(f, seg.Fields())
	if err != nil || st.numDocs != seg.Count() {
		_ = f.Close()
		return nil, false
	}
	return st, true
}

func readFooter(f *os.File, fields []string) (*Stored, error) {
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	size := fi.Size()
	if size < footerLen {
		return nil, errCorrupt
	}
	var b [footerLen]byte
	if _, err := f.ReadAt(b[:], size-footerLen); err != nil {
		return nil, err
	}
	idLen := binary.BigEndian.Uint32(b[0:4])
	numDocs := binary.BigEndian.Uint64(b[4:12])
	storedIndex := binary.BigEndian.Uint64(b[12:20])
	version := binary.BigEndian.Uint32(b[32:36])
	if version != FormatVersion {
		return nil, fmt.Errorf("zapread: segment version %d", version)
	}
	if idLen != 0 {
		// Written through file callbacks: the stored bytes are not
		// plain.
		return nil, fmt.Errorf("zapread: segment written with file callbacks %d", idLen)
	}
	end := uint64(size - footerLen)
	if storedIndex > end || numDocs > (end-storedIndex)/8 {
		return nil, errCorrupt
	}
	return &Stored{f: f, fields: fields, storedIndex: storedIndex, numDocs: numDocs, end: end}, nil
}

// readIndex reads the stored index: every document's offset.
func (st *Stored) readIndex() {
	b := make([]byte, 8*st.numDocs)
	if _, err := st.f.ReadAt(b, int64(st.storedIndex)); err != nil {
		st.indexErr = err
		return
	}
	st.offsets = b
}

// storedBuf is one read's scratch: the document's bytes as read, and its
// data uncompressed.
type storedBuf struct {
	raw, plain []byte
}

var storedBufs = sync.Pool{New: func() any { return &storedBuf{raw: make([]byte, 4096)} }}

// Visit calls visit with every stored field of document num, the _id
// first, until visit returns false: what SegmentSnapshot.VisitDocument
// gives. The values are valid only during the call.
func (st *Stored) Visit(num uint64, visit func(field string, typ byte, value []byte, pos []uint64) bool) error {
	if num >= st.numDocs {
		return nil
	}
	st.index.Do(st.readIndex)
	if st.indexErr != nil {
		return st.indexErr
	}
	at := binary.BigEndian.Uint64(st.offsets[8*num:])
	if at >= st.end {
		return errCorrupt
	}
	buf := storedBufs.Get().(*storedBuf)
	defer storedBufs.Put(buf)
	// One read of up to a page usually holds the whole document; a longer
	// one is read again at its length.
	raw := buf.raw[:min(uint64(cap(buf.raw)), st.end-at)]
	if _, err := st.f.ReadAt(raw, int64(at)); err != nil {
		return err
	}
	metaLen, n1 := binary.Uvarint(raw)
	if n1 <= 0 {
		return errCorrupt
	}
	dataLen, n2 := binary.Uvarint(raw[n1:])
	if n2 <= 0 {
		return errCorrupt
	}
	head := uint64(n1 + n2)
	whole := head + metaLen + dataLen
	if metaLen > st.end-at || dataLen > st.end-at || whole > st.end-at {
		return errCorrupt
	}
	if whole > uint64(len(raw)) {
		if whole > uint64(cap(buf.raw)) {
			buf.raw = make([]byte, whole)
		}
		raw = buf.raw[:whole]
		if _, err := st.f.ReadAt(raw, int64(at)); err != nil {
			return err
		}
	}
	meta := raw[head : head+metaLen]
	data := raw[head+metaLen : whole]

	idLen, k := binary.Uvarint(meta)
	if k <= 0 || idLen > uint64(len(data)) {
		return errCorrupt
	}
	meta = meta[k:]
	if !visit("_id", 't', data[:idLen], nil) {
		return nil
	}
	plain, err := snappy.Decode(buf.plain[:cap(buf.plain)], data[idLen:])
	if err != nil {
		return fmt.Errorf("zapread: stored fields of document %d: %w", num, err)
	}
	buf.plain = plain
	var pos []uint64
	for len(meta) > 0 {
		var v [5]uint64 // field, type, offset, length, array positions
		for i := range v {
			x, k := binary.Uvarint(meta)
			if k <= 0 {
				return errCorrupt
			}
			v[i], meta = x, meta[k:]
		}
		field, typ, o, l, numap := v[0], v[1], v[2], v[3], v[4]
		if field >= uint64(len(st.fields)) || o > uint64(len(plain)) || l > uint64(len(plain))-o || numap > uint64(len(meta)) {
			return errCorrupt
		}
		pos = pos[:0]
		for range numap {
			x, k := binary.Uvarint(meta)
			if k <= 0 {
				return errCorrupt
			}
			pos, meta = append(pos, x), meta[k:]
		}
		var ap []uint64
		if numap > 0 {
			ap = pos
		}
		if !visit(st.fields[field], byte(typ), plain[o:o+l], ap) {
			return nil
		}
	}
	return nil
}
