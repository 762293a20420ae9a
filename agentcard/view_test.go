package agentcard

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"testing"
)

// viewDigests pins, per ViewRevision, the digest of the views of every
// card in testdata/cards. A change to A2A's output changes the digest:
// increase ViewRevision (so stored views are rendered again) and add its
// digest here.
var viewDigests = map[int]string{
	1: "6bebda5a3003792291428d251ef14d603a737ca9254b3067790b5b154d0b2d27",
	// 2: interfaces an SDK cannot use are left out or completed
	// (a2aInterfaces; no card of testdata/cards has one), and the summary.
	2: "a1d08ab53c2317aedcf82686fe765a35c6acb71c2646186131387753a1972e4e",
}

func TestViewRevisionPinned(t *testing.T) {
	names, err := filepath.Glob(filepath.Join("testdata", "cards", "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(names)
	h := sha256.New()
	parsed := 0
	for _, n := range names {
		b, err := os.ReadFile(n)
		if err != nil {
			t.Fatal(err)
		}
		p, err := Parse(b, Options{CardURL: "https://georoute-agent.example.com/.well-known/agent-card.json"})
		if err != nil || p.Card == nil {
			continue // not a card (the invalid samples)
		}
		parsed++
		v, err := p.Card.ViewJSON()
		if err != nil {
			t.Fatalf("%s: %v", n, err)
		}
		want, err := json.Marshal(p.Card.A2A())
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(v, want) {
			t.Fatalf("%s: ViewJSON differs from the JSON of A2A()", n)
		}
		// The registry renders a new version's view from the parsed card
		// and an older one's from the card as stored (its JSON, decoded):
		// both must give the same bytes.
		stored, err := json.Marshal(p.Card)
		if err != nil {
			t.Fatal(err)
		}
		var back Card
		if err := json.Unmarshal(stored, &back); err != nil {
			t.Fatalf("%s: the stored card does not decode: %v", n, err)
		}
		if again, err := back.ViewJSON(); err != nil || !bytes.Equal(again, v) {
			t.Fatalf("%s: the view of the stored card differs (%v):\n%s\nwant\n%s", n, err, again, v)
		}
		h.Write([]byte(filepath.Base(n)))
		h.Write([]byte{0})
		h.Write(v)
		h.Write([]byte{0})
		// Revision 2 stores each card's summary beside its view.
		sum, err := p.Card.SummaryJSON()
		if err != nil {
			t.Fatal(err)
		}
		if again, err := back.SummaryJSON(); err != nil || !bytes.Equal(again, sum) {
			t.Fatalf("%s: the summary of the stored card differs (%v)", n, err)
		}
		h.Write(sum)
		h.Write([]byte{0})
	}
	if parsed < 20 {
		t.Fatalf("only %d cards parsed; the pin needs the whole testdata/cards set", parsed)
	}
	got := hex.EncodeToString(h.Sum(nil))
	if want := viewDigests[ViewRevision]; got != want {
		t.Fatalf("views of testdata/cards at ViewRevision %d: digest %s, pinned %q.\n"+
			"If A2A's output changed on purpose, increase ViewRevision and pin the new digest under it.", ViewRevision, got, want)
	}
}

func TestViewJSONNil(t *testing.T) {
	var c *Card
	v, err := c.ViewJSON()
	if err != nil || string(v) != "null" {
		t.Fatalf("nil card view = %q, %v; want null", v, err)
	}
}
