package registry_test

import (
	"bytes"
	"slices"
	"testing"

	"github.com/cardexhq/cardex/registry"
	"github.com/cardexhq/cardex/registry/registrytest"
)

// resigned returns card with a signature member whose bytes depend on n:
// what an agent that signs on every request serves.
func resigned(card []byte, n int) []byte {
	return append(bytes.TrimSuffix(card, []byte("}")), []byte(`,"signatures":[{"protected":"eyJhbGciOiJFUzI1NiJ9","signature":"sig`+itoa(n)+`"}]}`)...)
}

// The identity of a version is its content without signatures plus the
// keys that verify it (docs/verification.md): fresh signature bytes over
// the same content and keys are "unchanged" — no version, no diff, no
// change row (so no index work) — while a change of content, a stripped
// signature or another verifying key is a new version.
func TestRecordFetchVersionIdentity(t *testing.T) {
	registrytest.EachStore(t, func(t *testing.T, s *registry.Store) {
		c := newClock()
		svc := newService(s, c)
		ctx := t.Context()
		a := mustSubmit(t, svc, "https://resign.example.com/")
		card := cardJSON("Agent", "1.0.0")
		signedRes := func(n int, content string, trust registry.Trust, thumbs ...string) registry.FetchResult {
			r := okResult(t, c.Now(), resigned(card, n), trust, thumbs...)
			r.ContentSHA256 = content
			return r
		}
		crawl(t, svc, c, a.ID, signedRes(0, "content-1", registry.TrustVerified, "key-a"))
		_, mark := changeKinds(t, svc, 0)
		for n := 1; n <= 6; n++ {
			makeDue(c)
			crawl(t, svc, c, a.ID, signedRes(n, "content-1", registry.TrustVerified, "key-a"))
		}
		got, _ := svc.Get(ctx, admin, a.ID)
		vs, _ := svc.Versions(ctx, admin, a.ID)
		if got.VersionSeq != 1 || got.Trust != registry.TrustVerified || got.NeedsReview || len(vs) != 1 {
			t.Fatalf("after 6 re-signed fetches: version %d trust %s needsReview %v, %d versions", got.VersionSeq, got.Trust, got.NeedsReview, len(vs))
		}
		if kinds, _ := changeKinds(t, svc, mark); len(kinds) != 0 {
			t.Fatalf("re-signed fetches wrote changes %v", kinds)
		}
		fs, _ := svc.Fetches(ctx, admin, a.ID, 10)
		if len(fs) != 7 || fs[0].Result != registry.ResultUnchanged || fs[6].Result != registry.ResultNewVersion {
			t.Fatalf("fetch results %+v", fs)
		}

		// A key-set failure on fresh bytes is a verdict about the same
		// version, as for unchanged bytes; recovery likewise.
		makeDue(c)
		crawl(t, svc, c, a.ID, signedRes(7, "content-1", registry.TrustError))
		if got, _ := svc.Get(ctx, admin, a.ID); got.VersionSeq != 1 || got.Trust != registry.TrustError || got.NeedsReview {
			t.Fatalf("key set failing: version %d trust %s", got.VersionSeq, got.Trust)
		}
		makeDue(c)
		crawl(t, svc, c, a.ID, signedRes(8, "content-1", registry.TrustVerified, "key-a"))
		if got, _ := svc.Get(ctx, admin, a.ID); got.VersionSeq != 1 || got.Trust != registry.TrustVerified {
			t.Fatalf("recovered: version %d trust %s", got.VersionSeq, got.Trust)
		}
		kinds, _ := changeKinds(t, svc, mark)
		if !slices.Equal(kinds, []string{"trust", "trust"}) {
			t.Fatalf("failure and recovery changes %v", kinds)
		}

		// Another key over the same content is a new version (key-changed),
		// reviewed as a trust regression since key-b was never seen.
		makeDue(c)
		crawl(t, svc, c, a.ID, signedRes(9, "content-1", registry.TrustVerified, "key-b"))
		vs, _ = svc.Versions(ctx, admin, a.ID)
		if got, _ := svc.Get(ctx, admin, a.ID); len(vs) != 2 || got.VersionSeq != 1 || !got.NeedsReview ||
			len(vs[0].Diff) != 1 || vs[0].Diff[0].Kind != "key-changed" {
			t.Fatalf("new key: current %d needsReview %v versions %+v", got.VersionSeq, got.NeedsReview, vs)
		}
		// Signatures stripped from the same content: a new version too.
		makeDue(c)
		stripped := okResult(t, c.Now(), card, registry.TrustUnsigned)
		stripped.ContentSHA256 = "content-1"
		crawl(t, svc, c, a.ID, stripped)
		if vs, _ = svc.Versions(ctx, admin, a.ID); len(vs) != 3 || vs[0].Trust != registry.TrustUnsigned || !vs[0].Candidate {
			t.Fatalf("stripped: versions %+v", vs)
		}
		// New content: a new version.
		makeDue(c)
		crawl(t, svc, c, a.ID, signedRes(10, "content-2", registry.TrustVerified, "key-a"))
		if vs, _ = svc.Versions(ctx, admin, a.ID); len(vs) != 4 {
			t.Fatalf("new content: %d versions", len(vs))
		}
	})
}
