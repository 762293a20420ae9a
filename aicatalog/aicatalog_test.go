package aicatalog

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

func TestParseBothForms(t *testing.T) {
	doc, problems, err := Parse([]byte(`{"specVersion":"1.0","host":{"displayName":"Acme"},"entries":[
 {"identifier":"urn:air:acme.com:agent:fx","type":"application/a2a-agent-card+json","url":"https://a2a.acme.com/fx/card.json","tags":["finance"]},
 {"identifier":"urn:air:acme.com:agent:old","mediaType":"application/a2a-agent-card+json","url":"https://acme.com/old.json"},
 {"identifier":"urn:air:acme.com:agent:travel","type":"application/a2a-agent-card+json","data":{"name":"Travel","skills":[{"id":"a","tags":["x}"]}]}},
 {"identifier":"urn:air:acme.com:agent:both","type":"application/a2a-agent-card+json","url":"https://x","data":{}},
 {"identifier":"urn:air:acme.com:agent:clash","type":"a","mediaType":"b","url":"https://x"},
 {"type":"application/a2a-agent-card+json","url":"https://x"},
 7]}`), DefaultLimits)
	if err != nil {
		t.Fatal(err)
	}
	if doc.Host.DisplayName != "Acme" || len(doc.Entries) != 3 {
		t.Fatalf("doc %+v", doc)
	}
	if doc.Entries[1].Type != TypeA2ACard || doc.Entries[1].URL != "https://acme.com/old.json" {
		t.Fatalf("mediaType form: %+v", doc.Entries[1])
	}
	if string(doc.Entries[2].Data) != `{"name":"Travel","skills":[{"id":"a","tags":["x}"]}]}` {
		t.Fatalf("inline data: %s", doc.Entries[2].Data)
	}
	got := fmt.Sprint(problems)
	want := "[{3 exactly one of url and data is required} {4 type and mediaType disagree} {5 identifier is required} {6 an entry must be an object}]"
	if got != want {
		t.Fatalf("problems %s", got)
	}
	out, err := Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(out), "mediaType") || !strings.Contains(string(out), `"type": "application/a2a-agent-card+json"`) {
		t.Fatalf("written form: %s", out)
	}
}

func TestParseLimits(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"entries":[`)
	for i := range 10_000 {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"identifier":"e%d","type":"t","url":"https://x"}`, i)
	}
	b.WriteString(`]}`)
	if _, _, err := Parse([]byte(b.String()), DefaultLimits); !errors.Is(err, ErrTooManyEntries) {
		t.Fatalf("10k entries: %v", err)
	}
	deep := `{"entries":[{"identifier":"x","type":"t","data":` + strings.Repeat(`{"a":`, 100) + `1` + strings.Repeat(`}`, 100) + `}]}`
	if _, _, err := Parse([]byte(deep), DefaultLimits); !errors.Is(err, ErrInvalid) {
		t.Fatalf("deep nesting: %v", err)
	}
	if _, _, err := Parse([]byte(`{"entries":[]}`+strings.Repeat(" ", DefaultLimits.MaxBytes)), DefaultLimits); !errors.Is(err, ErrInvalid) {
		t.Fatalf("too large: %v", err)
	}
	for _, bad := range []string{`[]`, `{"entries":{}}`, `{}`, `{"entries":[],"entries":[]}`, "\xff"} {
		if _, _, err := Parse([]byte(bad), DefaultLimits); !errors.Is(err, ErrInvalid) {
			t.Errorf("%q: %v", bad, err)
		}
	}
}

func TestParseRepresentativeQueries(t *testing.T) {
	long := strings.Repeat("é", MaxQueryBytes/2) // exactly MaxQueryBytes bytes
	var many []string
	for i := range 15 {
		many = append(many, fmt.Sprintf("%q", fmt.Sprintf("question %d", i)))
	}
	doc, problems, err := Parse([]byte(`{"entries":[
 {"identifier":"a","type":"application/a2a-agent-card+json","url":"https://x/a","representativeQueries":["  convert 100 usd to eur ","convert 100 usd to eur","",7,null,["x"],"`+long+`","`+long+`x","what is the fx rate today?"]},
 {"identifier":"b","type":"application/a2a-agent-card+json","url":"https://x/b","representativeQueries":"not a list"},
 {"identifier":"c","type":"application/a2a-agent-card+json","url":"https://x/c","representativeQueries":{"q":"x"}},
 {"identifier":"d","type":"application/a2a-agent-card+json","url":"https://x/d","representativeQueries":[`+strings.Join(many, ",")+`]},
 {"identifier":"e","type":"application/a2a-agent-card+json","url":"https://x/e","representativeQueries":[1,2]}]}`), DefaultLimits)
	if err != nil || len(problems) != 0 || len(doc.Entries) != 5 {
		t.Fatalf("err %v, problems %v, entries %d", err, problems, len(doc.Entries))
	}
	want := []string{"convert 100 usd to eur", long, "what is the fx rate today?"}
	if got := doc.Entries[0].RepresentativeQueries; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("bounded queries %q, want %q", got, want)
	}
	for _, i := range []int{1, 2, 4} {
		if q := doc.Entries[i].RepresentativeQueries; q != nil {
			t.Fatalf("entry %d: a wrong type is ignored, got %q", i, q)
		}
	}
	d := doc.Entries[3].RepresentativeQueries
	if len(d) != MaxQueries || d[0] != "question 0" || d[MaxQueries-1] != "question 9" {
		t.Fatalf("first %d of 15 kept: %q", MaxQueries, d)
	}
	out, err := Marshal(&Document{Entries: doc.Entries[:1]})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(out), `"representativeQueries": [`) {
		t.Fatalf("written form: %s", out)
	}
	out, _ = Marshal(&Document{Entries: doc.Entries[1:2]})
	if strings.Contains(string(out), "representativeQueries") {
		t.Fatalf("none written when absent: %s", out)
	}
}
