package web

import (
	"reflect"
	"testing"
)

func TestParseProse(t *testing.T) {
	got := parseProse("The REST API. Errors are `application/problem+json`\nwith a **stable** type.\n\n" +
		"- one `a`\n  continued\n- two\n\nAn unclosed ` and a lone * stay text.")
	want := prose{
		{Items: []proseLine{{{Text: "The REST API. Errors are "}, {Text: "application/problem+json", Code: true},
			{Text: " with a "}, {Text: "stable", Strong: true}, {Text: " type."}}}},
		{List: true, Items: []proseLine{{{Text: "one "}, {Text: "a", Code: true}, {Text: " continued"}}, {{Text: "two"}}}},
		{Items: []proseLine{{{Text: "An unclosed ` and a lone * stay text."}}}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("parseProse:\n got %#v\nwant %#v", got, want)
	}
	if p := parseProse("  \n\n "); len(p) != 0 {
		t.Fatalf("blank text: %#v", p)
	}
}
