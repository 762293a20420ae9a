package agentcard

import (
	"bytes"
	"testing"
)

// BenchmarkParse parses and validates a realistic card of about 5 KB: the
// spec's v1 sample (3.4 KB) with two more skills appended.
func BenchmarkParse(b *testing.B) {
	data := readCard(b, "A2A_main_")
	extra := `,{"id":"eta","name":"Arrival Estimator","description":"Estimates arrival times for a planned route using live traffic, weather and historical speed profiles for each road segment.","tags":["eta","traffic","Routing"],"examples":["When will I reach SFO if I leave now?","ETA from Palo Alto to Oakland at 5pm"],"inputModes":["application/json","text/plain"],"outputModes":["application/json"]},{"id":"poi","name":"Points of Interest","description":"Finds points of interest along a route, filtered by category, rating and opening hours, and returns them ordered by detour time.","tags":["poi","search","maps"],"examples":["Coffee shops on my way to work","EV chargers within 2 km of the route"],"inputModes":["text/plain"],"outputModes":["application/json","text/html"],"securityRequirements":[{"schemes":{"google":{"list":["openid"]}}}]}`
	marker := []byte(`
  ],
  "signatures"`)
	idx := bytes.Index(data, marker)
	if idx < 0 {
		b.Fatal("fixture changed: no skills/signatures boundary")
	}
	card := append(append(append([]byte{}, data[:idx]...), extra...), data[idx:]...)
	if _, err := Parse(card, Options{}); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(card)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Parse(card, Options{CardURL: "https://georoute-agent.example.com/.well-known/agent-card.json"}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "cards/s")
}
