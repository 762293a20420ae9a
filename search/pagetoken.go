package search

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/cardexhq/cardex/registry"
)

// pageToken is the opaque cursor of docs/api.md: the sort values of the
// last hit returned (Bleve search-after, so deep pages cost no more than the
// first; none for relevance pages, which are cut from one ranked pass by
// offset) plus how many results came before, which caps paging at
// MaxResultWindow (I.82). Key binds it to one query: a token replayed with
// other filters is refused rather than silently skipping results.
type pageToken struct {
	Key    string   `json:"k"`
	After  []string `json:"a"`
	Offset int      `json:"o"`
	Skip   int      `json:"s,omitempty"` // skills only: skill hits already returned from the next agent
}

func encodeToken(t pageToken) string {
	b, _ := json.Marshal(t) // strings and ints only: cannot fail
	return base64.RawURLEncoding.EncodeToString(b)
}

func decodeToken(s, key string, sortLen int) (pageToken, error) {
	var t pageToken
	if len(s) > 4096 {
		return t, fmt.Errorf("%w: too long", ErrInvalidPageToken)
	}
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return t, fmt.Errorf("%w: not base64url", ErrInvalidPageToken)
	}
	if err := json.Unmarshal(b, &t); err != nil {
		return t, fmt.Errorf("%w: malformed", ErrInvalidPageToken)
	}
	if t.Key != key {
		return t, fmt.Errorf("%w: issued for another query", ErrInvalidPageToken)
	}
	if len(t.After) != sortLen || t.Offset <= 0 || t.Offset >= MaxResultWindow || t.Skip < 0 {
		return t, fmt.Errorf("%w: out of range", ErrInvalidPageToken)
	}
	return t, nil
}

// queryKey fingerprints everything that decides a result order.
func queryKey(kind string, q string, scope registry.Scope, s Sort, f Filters) string {
	h := sha256.New()
	write := func(s string) {
		var n [8]byte
		binary.BigEndian.PutUint64(n[:], uint64(len(s)))
		h.Write(n[:])
		h.Write([]byte(s))
	}
	write(kind)
	write(q)
	write(scope.Key())
	write(string(s))
	for _, ff := range f.fields() {
		write(ff.field)
		write(strconv.Itoa(len(ff.values)))
		for _, val := range ff.values {
			write(val)
		}
	}
	return base64.RawURLEncoding.EncodeToString(h.Sum(nil)[:12])
}
