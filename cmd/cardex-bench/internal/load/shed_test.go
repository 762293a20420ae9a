package load

import (
	"strings"
	"testing"
	"time"
)

// A 503 is the server shedding load: reported as shed, and a failure only
// without -allow-shed; any other 5xx fails the run either way.
func TestShedAnswers(t *testing.T) {
	s := newStats()
	s.add(result{op: "search", status: 503}, time.Millisecond)
	s.add(result{op: "search", status: 503}, time.Millisecond)
	s.add(result{op: "search", status: 200}, time.Millisecond)
	for _, allow := range []bool{false, true} {
		rep := newReport(&Config{AllowShed: allow}, s, time.Second, sample{}, sample{}, sample{})
		if rep.ServerErrors != 2 || rep.Shed != 2 {
			t.Fatalf("serverErrors %d shed %d, want 2 and 2", rep.ServerErrors, rep.Shed)
		}
		f := strings.Join(rep.failures(), "; ")
		if allow != (f == "") {
			t.Errorf("allow-shed %v: failures %q", allow, f)
		}
	}
	s.add(result{op: "get", status: 500}, time.Millisecond)
	rep := newReport(&Config{AllowShed: true}, s, time.Second, sample{}, sample{}, sample{})
	if f := rep.failures(); len(f) != 1 || f[0] != "1 responses with a 5xx status other than 503" {
		t.Errorf("a 500 with -allow-shed: failures %q", f)
	}
}
