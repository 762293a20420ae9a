package discover

import (
	"strings"
	"testing"
)

func results(source string, ids ...string) []ARDResult {
	out := make([]ARDResult, len(ids))
	for i, id := range ids {
		out[i] = ARDResult{ARDEntry: ARDEntry{Identifier: id, DisplayName: id}, Source: source}
	}
	return out
}

// Reciprocal rank fusion: one identifier listed by two registries (also
// in its legacy spelling) is one result, first by the sum of its ranks'
// shares; ties keep the lists' order; the first list's copy is kept.
func TestFuseRRF(t *testing.T) {
	local := results("local", "urn:air:a.example:x:1", "urn:air:a.example:x:2", "urn:air:a.example:x:3")
	peer := results("peer", "urn:ai:a.example:x:3", "urn:air:b.example:x:9")
	got := Fuse([][]ARDResult{local, peer}, 10)
	var ids []string
	for _, r := range got {
		ids = append(ids, r.Identifier+"@"+r.Source)
	}
	want := "urn:air:a.example:x:3@local,urn:air:a.example:x:1@local,urn:air:a.example:x:2@local,urn:air:b.example:x:9@peer"
	if strings.Join(ids, ",") != want {
		t.Fatalf("fused %v", ids)
	}
	if got := Fuse([][]ARDResult{local, peer}, 2); len(got) != 2 {
		t.Fatalf("size: %d", len(got))
	}
}

// A peer's answer is read member by member: what does not fit is dropped,
// never an error of the whole answer.
func TestPeerResults(t *testing.T) {
	rs, err := peerResults([]byte(`{"results":[{"identifier":"urn:air:p.example:a:1","displayName":"A","type":"application/agent-card+json","url":"https://p.example/a","score":88,"source":"https://evil.example"},
 {"identifier":"urn:air:p.example:a:2","displayName":"B","type":"t","url":"https://p.example/b","score":101},
 {"identifier":"urn:air:p.example:a:3","displayName":"C","type":"t","url":"ftp://p.example/c"},
 {"identifier":"urn:air:p.example:a:4","displayName":"","type":"t","url":"https://p.example/d"},
 {"identifier":"`+strings.Repeat("x", 2000)+`","displayName":"E","type":"t","url":"https://p.example/e"}]}`), "https://peer.example/ard", 10)
	if err != nil || len(rs) != 2 || rs[0].Score != 88 || rs[0].Source != "https://peer.example/ard" || rs[0].Type != "application/a2a-agent-card+json" ||
		rs[1].Score != 0 {
		t.Fatalf("%+v %v", rs, err)
	}
	if _, err := peerResults([]byte(`<html>`), "p", 10); err == nil {
		t.Fatal("HTML read as an answer")
	}
}
