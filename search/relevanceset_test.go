package search

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/cardexhq/cardex/agentcard"
	"github.com/cardexhq/cardex/agentfleet"
	"github.com/cardexhq/cardex/registry"
)

// The judged relevance set (testdata/relevance/README.md): a fixed corpus
// of published cards, the demo's cards, generated fleet cards and the
// hand-written ones of relevance_corpus_test.go, and queries with graded
// judgements over it.

// fleetFirst and fleetLast bound the agentfleet.GenerateCard numbers of
// the set's generated agents: the demo's (100–105, 200 and 201) and the
// ones between, of the same kind.
const fleetFirst, fleetLast = 100, 201

// relevanceSetAgents loads the set's corpus: relevanceAgents, the demo's
// published cards (id "demo-" and the file name) not already among them,
// and the fleet's generated cards (id "fleet-N").
func relevanceSetAgents(tb testing.TB) []registry.Agent {
	tb.Helper()
	out := relevanceAgents(tb)
	have := map[string]bool{}
	for _, f := range realCards {
		have[f] = true
	}
	dir := filepath.Join("..", "demo", "demodata")
	names, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil || len(names) == 0 {
		tb.Fatalf("demo cards: %d, %v", len(names), err)
	}
	sort.Strings(names)
	for _, n := range names {
		base := filepath.Base(n)
		if have[base] {
			continue
		}
		b, err := os.ReadFile(n)
		if err != nil {
			tb.Fatal(err)
		}
		p, err := agentcard.Parse(b, agentcard.Options{})
		if err != nil {
			tb.Fatalf("%s: %v", base, err)
		}
		a := testAgent(demoCardID(base), "", "")
		a.Card = p.Card
		out = append(out, a)
	}
	for n := fleetFirst; n <= fleetLast; n++ {
		id := fmt.Sprintf("fleet-%d", n)
		b := agentfleet.GenerateCard(n, "https://"+id+".example.com", "1.0.0")
		p, err := agentcard.Parse(b, agentcard.Options{})
		if err != nil {
			tb.Fatalf("%s: %v", id, err)
		}
		a := testAgent(id, "", "")
		a.Card = p.Card
		a.UpdatedAt = time.Date(2026, 2, 1, 0, 0, n, 0, time.UTC)
		out = append(out, a)
	}
	return out
}

// demoCardID is the set's id of a demo card file: "demo-" and the file
// name without ".json", lowercased, at most 40 bytes.
func demoCardID(file string) string {
	s := strings.ToLower(strings.TrimSuffix(file, ".json"))
	s = strings.NewReplacer("_", "-", ".", "-", "+", "-").Replace(s)
	return "demo-" + s[max(0, len(s)-40):]
}

// judgedQuery is one query of the set with its class and judgements.
type judgedQuery struct {
	class, q string
	judged   []judgement
}

// judgement grades the agents a selector picks (testdata/relevance/queries.txt).
type judgement struct {
	kind, value string // kind: "id", "skill", "name" or "area"
	grade       int
}

func (j judgement) picks(a registry.Agent) bool {
	switch j.kind {
	case "id":
		return a.ID == j.value
	case "name":
		return a.Card != nil && a.Card.Name == j.value
	case "area":
		return strings.HasPrefix(a.ID, "fleet-") && a.Card != nil && strings.HasPrefix(a.Card.Description, j.value+" agent of ")
	case "skill":
		if a.Card != nil {
			for _, s := range a.Card.Skills {
				if s.ID == j.value {
					return true
				}
			}
		}
	}
	return false
}

// loadJudgedQueries reads testdata/relevance/queries.txt.
func loadJudgedQueries(tb testing.TB) []judgedQuery {
	tb.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "relevance", "queries.txt"))
	if err != nil {
		tb.Fatal(err)
	}
	var out []judgedQuery
	for n, line := range strings.Split(string(b), "\n") {
		if line = strings.TrimSpace(line); line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		parts := strings.Split(line, " | ")
		if len(parts) != 3 {
			tb.Fatalf("queries.txt line %d: want class | query | judgements", n+1)
		}
		jq := judgedQuery{class: parts[0], q: parts[1]}
		for j := range strings.SplitSeq(parts[2], ";") {
			sel, grade, ok := strings.Cut(strings.TrimSpace(j), "=")
			if !ok || len(grade) != 1 || grade[0] < '0' || grade[0] > '3' {
				tb.Fatalf("queries.txt line %d: bad judgement %q", n+1, j)
			}
			kind, value, ok := strings.Cut(sel, ":")
			if !ok {
				kind, value = "id", sel
			}
			jq.judged = append(jq.judged, judgement{kind, value, int(grade[0] - '0')})
		}
		out = append(out, jq)
	}
	return out
}

// grades is each agent's grade for jq: the highest of the judgements
// that pick it (unjudged agents are absent: grade 0).
func (jq judgedQuery) grades(agents []registry.Agent) map[string]int {
	out := map[string]int{}
	for _, a := range agents {
		for _, j := range jq.judged {
			if j.picks(a) && j.grade > out[a.ID] {
				out[a.ID] = j.grade
			}
		}
	}
	return out
}

// queryMetrics are one query's nDCG@10 (gain 2^grade−1, log2 discount,
// over the ideal order of every judged agent), recall@10 and reciprocal
// rank, both of the agents graded 2 or 3.
func queryMetrics(ids []string, grades map[string]int) (ndcg, recall, rr float64) {
	dcg := func(gs []int) float64 {
		s := 0.0
		for i, g := range gs[:min(10, len(gs))] {
			s += (math.Pow(2, float64(g)) - 1) / math.Log2(float64(i+2))
		}
		return s
	}
	var got, ideal []int
	relevant, found := 0, 0
	for _, id := range ids[:min(10, len(ids))] {
		g := grades[id]
		got = append(got, g)
		if g >= 2 {
			found++
			if rr == 0 {
				rr = 1 / float64(len(got))
			}
		}
	}
	for _, g := range grades {
		ideal = append(ideal, g)
		if g >= 2 {
			relevant++
		}
	}
	sort.Sort(sort.Reverse(sort.IntSlice(ideal)))
	if d := dcg(ideal); d > 0 {
		ndcg = dcg(got) / d
	}
	if relevant > 0 {
		recall = float64(found) / float64(min(relevant, 10))
	}
	return ndcg, recall, rr
}

// classMetrics are the mean metrics of one query class.
type classMetrics struct {
	n                int
	ndcg, recall, rr float64
}

// evalRelevanceSet runs every judged query on x and returns the mean
// metrics per class and over all ("all"); each query's result is passed
// to each (nil: none).
func evalRelevanceSet(tb testing.TB, x *Index, agents []registry.Agent, qs []judgedQuery, each func(jq judgedQuery, ids []string, ndcg, recall, rr float64)) map[string]*classMetrics {
	out := map[string]*classMetrics{"all": {}}
	for _, jq := range qs {
		r, err := x.Search(tb.Context(), Query{Q: jq.q, PageSize: 10})
		if err != nil {
			tb.Fatalf("%q: %v", jq.q, err)
		}
		ids := hitIDs(r)
		ndcg, recall, rr := queryMetrics(ids, jq.grades(agents))
		if each != nil {
			each(jq, ids, ndcg, recall, rr)
		}
		for _, k := range []string{jq.class, "all"} {
			m := out[k]
			if m == nil {
				m = &classMetrics{}
				out[k] = m
			}
			m.n++
			m.ndcg += ndcg
			m.recall += recall
			m.rr += rr
		}
	}
	for _, m := range out {
		m.ndcg /= float64(m.n)
		m.recall /= float64(m.n)
		m.rr /= float64(m.n)
	}
	return out
}

// openRelevanceSet indexes the set's corpus, every agent answering.
func openRelevanceSet(tb testing.TB) (*Index, []registry.Agent) {
	tb.Helper()
	agents := relevanceSetAgents(tb)
	src := newMemSource()
	for _, a := range agents {
		src.put(a, registry.ChangeSubmitted)
	}
	dir := tb.TempDir()
	x, err := Open(dir, Options{LockTimeout: 200 * time.Millisecond})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = x.Close() })
	if err := x.Rebuild(tb.Context(), src); err != nil {
		tb.Fatal(err)
	}
	return x, agents
}

// The judgement file is well formed: at least 200 queries, each with an
// agent graded 2 or 3, every selector picking at least one agent.
func TestRelevanceSetJudgements(t *testing.T) {
	agents := relevanceSetAgents(t)
	qs := loadJudgedQueries(t)
	if len(qs) < 200 {
		t.Fatalf("%d judged queries, want at least 200", len(qs))
	}
	seen := map[string]bool{}
	for _, jq := range qs {
		if seen[jq.q] {
			t.Errorf("%q judged twice", jq.q)
		}
		seen[jq.q] = true
		good := false
		for _, j := range jq.judged {
			n := 0
			for _, a := range agents {
				if j.picks(a) {
					n++
				}
			}
			if n == 0 {
				t.Errorf("%q: %s:%s picks no agent", jq.q, j.kind, j.value)
			}
			good = good || (n > 0 && j.grade >= 2)
		}
		if !good {
			t.Errorf("%q: no agent graded 2 or 3", jq.q)
		}
	}
}

// BenchmarkRelevance reports the judged set's mean nDCG@10, recall@10
// and MRR per query class (docs/benchmarks.md "Relevance"): a number to
// compare before and after a ranking change, not a pass or fail.
// CARDEX_RELEVANCE_DETAIL=1 logs each query's results and metrics.
func BenchmarkRelevance(b *testing.B) {
	x, agents := openRelevanceSet(b)
	qs := loadJudgedQueries(b)
	var each func(judgedQuery, []string, float64, float64, float64)
	if os.Getenv("CARDEX_RELEVANCE_DETAIL") != "" {
		each = func(jq judgedQuery, ids []string, ndcg, recall, rr float64) {
			fmt.Printf("%-10s %-45q nDCG %.2f R %.2f RR %.2f %v\n", jq.class, jq.q, ndcg, recall, rr, ids)
		}
	}
	var m map[string]*classMetrics
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		m = evalRelevanceSet(b, x, agents, qs, each)
		each = nil
	}
	b.StopTimer()
	for class, cm := range m {
		b.ReportMetric(cm.ndcg, "nDCG@10/"+class)
		b.ReportMetric(cm.recall, "recall@10/"+class)
		b.ReportMetric(cm.rr, "MRR/"+class)
	}
}

func TestDumpRelevanceSet(t *testing.T) {
	if os.Getenv("CARDEX_DUMP_RELEVANCE") == "" {
		t.Skip("set CARDEX_DUMP_RELEVANCE=1")
	}
	for _, a := range relevanceSetAgents(t) {
		fmt.Printf("%s | %s | %s\n", a.ID, a.Card.Name, a.Card.Description)
		for _, s := range a.Card.Skills {
			fmt.Printf("    %s: %s — %s %v %v\n", s.ID, s.Name, s.Description, s.Tags, s.Examples)
		}
	}
}
