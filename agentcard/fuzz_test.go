package agentcard

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// FuzzParse: Parse never panics; it either rejects with an *InvalidError
// holding at least one error, or returns a card whose JSON marshals and
// warnings only.
func FuzzParse(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "cards", "*.json"))
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte(`{"name":"a","NAME":"b","skills":[{"id":"x","tags":[" A","a"]}],"security":[{"schemes":[]}]}`))
	f.Add([]byte(`{"name":"a","url":"java\tscript:x","securitySchemes":{"o":{"type":"oauth2","flows":{"password":{"scopes":{"a":1}}}}}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := Parse(data, Options{CardURL: "https://a.example/.well-known/agent-card.json"})
		if err != nil {
			var inv *InvalidError
			if !errors.As(err, &inv) || !errors.Is(err, ErrInvalidCard) || p != nil {
				t.Fatalf("err = %v (%T), p = %v", err, err, p)
			}
			hasErr := false
			for _, pr := range inv.Problems {
				hasErr = hasErr || pr.Severity == SeverityError
			}
			if !hasErr {
				t.Fatalf("rejected without an error problem: %+v", inv.Problems)
			}
			return
		}
		if _, err := json.Marshal(p.Card); err != nil {
			t.Fatalf("card does not marshal: %v", err)
		}
		for _, pr := range p.Problems {
			if pr.Severity != SeverityWarning {
				t.Fatalf("accepted card with %+v", pr)
			}
		}
		if d := Diff(p.Card, p.Card); d != nil {
			t.Fatalf("card differs from itself: %+v", d)
		}
	})
}
