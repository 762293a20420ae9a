package ratelimit

import (
	"fmt"
	"testing"
	"time"
)

// A guessing run from one address reaches 429, but the correct credential
// presented from the same address is still checked (Before never refuses
// it), and the very credential that failed is refused unchecked.
func TestGuardNeverBlocksAnUntriedCredential(t *testing.T) {
	g := NewGuard(Rate{N: 3, Per: time.Minute}, 100)
	for i := range 3 {
		if refuse, _ := g.Before("shared", fmt.Sprintf("bad%d", i), true, t0); refuse {
			t.Fatalf("guess %d refused inside the budget", i)
		}
		if limited, _ := g.Failed("shared", fmt.Sprintf("bad%d", i), t0); limited {
			t.Fatalf("failure %d limited inside the budget", i+1)
		}
	}
	if limited, wait := g.Failed("shared", "bad3", t0); !limited || wait != 20*time.Second {
		t.Fatalf("failure past the budget: limited %t wait %v", limited, wait)
	}
	if refuse, _ := g.Before("shared", "correct", true, t0); refuse {
		t.Fatal("a credential that never failed was refused unchecked")
	}
	if refuse, wait := g.Before("shared", "bad1", true, t0); !refuse || wait != 20*time.Second {
		t.Fatalf("a credential that failed: refuse %t wait %v", refuse, wait)
	}
	if refuse, _ := g.Before("shared", "", false, t0); !refuse {
		t.Fatal("a malformed credential from an address over budget was checked")
	}
	if refuse, _ := g.Before("other", "bad1", true, t0); refuse {
		t.Fatal("another address is refused")
	}
	if refuse, _ := g.Before("shared", "bad1", true, t0.Add(time.Minute)); refuse {
		t.Fatal("refused after the budget refilled")
	}
	var none *Guard
	if refuse, _ := none.Before("a", "b", false, t0); refuse {
		t.Fatal("nil guard refused")
	}
	if limited, _ := none.Failed("a", "b", t0); limited {
		t.Fatal("nil guard limited")
	}
	if NewGuard(Rate{}, 10) != nil {
		t.Fatal("zero rate built a guard")
	}
}

// Submit spends the address bucket, then the domain bucket of the card
// URL's registrable domain, whichever way the URL is spelled.
func TestLimitersSubmit(t *testing.T) {
	l := NewLimiters(Limits{SubmitPerAddress: Rate{N: 100, Per: time.Minute}, SubmitPerDomain: Rate{N: 2, Per: time.Hour}}, 0)
	for i, u := range []string{"a.victim.example", "https://b.victim.example/"} {
		if r := l.Submit(fmt.Sprint("addr", i), u, t0); r != nil {
			t.Fatalf("%s refused: %+v", u, r)
		}
	}
	r := l.Submit("addr9", "c.victim.example", t0)
	if r == nil || r.Detail != "too many submissions for this domain" || r.Wait != 30*time.Minute {
		t.Fatalf("third submission for the domain: %+v", r)
	}
	if r := l.Submit("addr9", "https://other.example/", t0); r != nil {
		t.Fatalf("another domain refused: %+v", r)
	}
	var none *Limiters
	if r := none.Submit("a", "b", t0); r != nil {
		t.Fatal("nil Limiters refused")
	}
	if ok, _ := none.Read("a", t0); !ok {
		t.Fatal("nil Limiters refused a read")
	}
}
