package strictjson

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

func TestParseRejects(t *testing.T) {
	deep := strings.Repeat("[", 65) + strings.Repeat("]", 65)
	cases := []struct {
		name, in, code, pointer string
		offset                  int
	}{
		{"empty", "  ", CodeEmpty, "", 2},
		{"bom", "\xEF\xBB\xBF{}", CodeBOM, "", 0},
		{"trailing comma", `{"a":1,}`, CodeSyntax, "", 7},
		{"trailing value", `{"a":1} {"b":2}`, CodeTrailingData, "", 8},
		{"duplicate top", `{"name":"Good","name":"Evil"}`, CodeDuplicateKey, "/name", 15},
		{"duplicate deep", `{"skills":[{"id":"a","id":"b"}]}`, CodeDuplicateKey, "/skills/0/id", 21},
		{"duplicate after escape", `{"a":1,"\u0061":2}`, CodeDuplicateKey, "/a", 7},
		{"invalid utf8", "{\"name\":\"\xff\"}", CodeInvalidUTF8, "/name", 9},
		{"invalid utf8 after escape", "{\"name\":\"\\n\xc3\"}", CodeInvalidUTF8, "/name", 11},
		{"lone high surrogate", `{"name":"\ud800"}`, CodeLoneSurrog, "/name", 9},
		{"lone low surrogate", `{"name":"\udc00x"}`, CodeLoneSurrog, "/name", 9},
		{"high then non-low", `{"name":"\ud800\u0041"}`, CodeLoneSurrog, "/name", 9},
		{"overflow", `{"n":1e400}`, CodeNumberRange, "/n", 5},
		{"negative overflow", `{"n":-1e400}`, CodeNumberRange, "/n", 5},
		{"too deep", deep, CodeTooDeep, "/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0", 64},
		{"nan", `{"n":NaN}`, CodeSyntax, "/n", 5},
		{"leading zero", `{"n":01}`, CodeSyntax, "", 6},
		{"control char", "{\"a\":\"x\ty\"}", CodeSyntax, "/a", 7},
		{"bad escape", `{"a":"\x"}`, CodeSyntax, "/a", 6},
		{"single quotes", `{'a':1}`, CodeSyntax, "", 1},
		{"unterminated", `{"a":"b`, CodeSyntax, "/a", 7},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse([]byte(c.in))
			e, ok := AsError(err)
			if !ok {
				t.Fatalf("Parse(%q) error = %v, want *Error", c.in, err)
			}
			if e.Code != c.code || e.Pointer != c.pointer || e.Offset != c.offset {
				t.Fatalf("Parse(%q) = {code %s, pointer %q, offset %d}, want {%s, %q, %d} (%v)", c.in, e.Code, e.Pointer, e.Offset, c.code, c.pointer, c.offset, e)
			}
		})
	}
}

func TestParseTooLarge(t *testing.T) {
	in := []byte(`{"a":"` + strings.Repeat("x", 600<<10) + `"}`)
	_, err := Parse(in)
	if e, ok := AsError(err); !ok || e.Code != CodeTooLarge {
		t.Fatalf("err = %v, want too_large", err)
	}
	if _, err := ParseWithLimits(in, Limits{}); err != nil {
		t.Fatalf("no limit: %v", err)
	}
}

func TestParseDepthLimitIsInclusive(t *testing.T) {
	ok := strings.Repeat("[", 64) + strings.Repeat("]", 64)
	if _, err := Parse([]byte(ok)); err != nil {
		t.Fatalf("depth 64: %v", err)
	}
}

func TestParseTree(t *testing.T) {
	in := `{"b":[1,-0.5e+3,true,false,null],"a":{"x":"\u00e9\ud83d\ude00\n\/"},"":""}`
	v, err := Parse([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	if v.Kind != Object || len(v.Object) != 3 || v.Object[0].Key != "b" || v.Object[1].Key != "a" || v.Object[2].Key != "" {
		t.Fatalf("unexpected tree %+v", v)
	}
	arr := v.Get("b").Array
	if len(arr) != 5 || arr[1].Number != "-0.5e+3" || !arr[2].Bool || arr[3].Bool || arr[4].Kind != Null {
		t.Fatalf("array = %+v", arr)
	}
	if f, _ := arr[1].Float(); f != -500 {
		t.Fatalf("float = %v", f)
	}
	if got := v.Get("a").Get("x").String; got != "é😀\n/" {
		t.Fatalf("string = %q", got)
	}
	if v.Get("a").Offset != 37 {
		t.Fatalf("offset = %d", v.Get("a").Offset)
	}
	if v.Get("missing") != nil || arr[0].Get("x") != nil {
		t.Fatal("Get on missing or non-object must be nil")
	}
}

func TestMarshalRoundTrip(t *testing.T) {
	in := "{\"k\":\"a\\\"b\\\\c\\u0001\\u001f\\b\\f\\n\\r\\t</script>\u2028é😀\",\"n\":[1E30,4.50,-0],\"o\":{}}"
	v, err := Parse([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	out := Marshal(v)
	want := "{\"k\":\"a\\\"b\\\\c\\u0001\\u001f\\b\\f\\n\\r\\t</script>\u2028é😀\",\"n\":[1E30,4.50,-0],\"o\":{}}"
	if string(out) != want {
		t.Fatalf("Marshal =\n%s\nwant\n%s", out, want)
	}
	v2, err := Parse(out)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(Marshal(v2), out) {
		t.Fatal("second round trip differs")
	}
	c := v.Clone()
	c.Object[0].Value.String = "changed"
	if v.Object[0].Value.String == "changed" {
		t.Fatal("Clone shares memory")
	}
}

func TestPointer(t *testing.T) {
	if got := Pointer("a/b", "m~n", "0"); got != "/a~1b/m~0n/0" {
		t.Fatalf("Pointer = %q", got)
	}
}

// FuzzParse checks that Parse never panics, agrees with encoding/json on
// what is valid wherever both are strict, and that Marshal round-trips.
func FuzzParse(f *testing.F) {
	for _, s := range []string{`{}`, `{"a":[1,2,{"b":null}]}`, `"\ud83d\ude00"`, `[1e400]`, `{"a":1,"a":2}`, "\xEF\xBB\xBF{}", `[-0.0e-0]`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		v, err := Parse(data)
		if err != nil {
			return
		}
		if !json.Valid(data) {
			t.Fatalf("strictjson accepted what encoding/json rejects: %q", data)
		}
		out := Marshal(v)
		v2, err := Parse(out)
		if err != nil {
			t.Fatalf("Marshal output does not parse: %v\n%q", err, out)
		}
		if !bytes.Equal(Marshal(v2), out) {
			t.Fatalf("round trip not stable: %q", out)
		}
	})
}
