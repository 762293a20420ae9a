// Package corpus generates realistic agents for benchmarks and load tests:
// cards from a dozen business domains whose words, tags, modes, bindings,
// schemes and extensions follow Zipf distributions over thousands of
// distinct terms, so posting lists and facets look like a real catalogue
// rather than a 50-word toy. Generation is deterministic: agent i of seed s
// is always the same, and agents are produced one at a time so a 100k
// corpus never has to sit in memory.
package corpus

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/cardexhq/cardex/agentcard"
	"github.com/cardexhq/cardex/registry"
)

// Generator produces agents deterministically from a seed.
type Generator struct {
	seed uint64
	base time.Time
}

// New returns a generator for seed.
func New(seed uint64) *Generator {
	return &Generator{seed: seed, base: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
}

// ID is the id of agent i: fixed width, so ids ascend with i.
func ID(i int) string { return fmt.Sprintf("agent-%08d", i) }

// Agents returns agents 0..n-1.
func (g *Generator) Agents(n int) []registry.Agent {
	out := make([]registry.Agent, n)
	for i := range out {
		out[i] = g.Agent(i)
	}
	return out
}

type picker struct {
	r *rand.Rand
}

// zipf picks from a ranked list: the first entries are the most frequent.
func (p picker) zipf(list []string) string {
	z := rand.NewZipf(p.r, 1.15, 2, uint64(len(list)-1))
	return list[z.Uint64()]
}

func (p picker) chance(f float64) bool { return p.r.Float64() < f }

func (p picker) weighted(values []string, weights []float64) string {
	x := p.r.Float64()
	for i, w := range weights {
		if x < w {
			return values[i]
		}
		x -= w
	}
	return values[len(values)-1]
}

// Agent returns agent i.
func (g *Generator) Agent(i int) registry.Agent {
	p := picker{rand.New(rand.NewPCG(g.seed, uint64(i)))}
	d := domains[rand.NewZipf(p.r, 1.05, 3, uint64(len(domains)-1)).Uint64()]
	brand := titleCase(p.zipf(brandParts) + p.zipf(brandSuffix))
	provider := titleCase(p.zipf(brandParts)) + " " + p.weighted(w("Inc. Ltd GmbH Labs Corp SAS"), []float64{.3, .2, .15, .15, .1, .1})
	name := brand + " " + titleCase(p.zipf(d.nouns)) + " " + p.zipf(agentWords)
	updated := g.base.Add(time.Duration(p.r.IntN(365*24*60)) * time.Minute)
	a := registry.Agent{
		ID:         ID(i),
		Host:       strings.ToLower(brand) + fmt.Sprintf("%d.example.com", i),
		Status:     registry.Status(p.weighted(w("approved pending rejected suspended removed"), []float64{.85, .05, .03, .05, .02})),
		Health:     registry.Health(p.weighted(w("ok unknown failing gone"), []float64{.8, .1, .07, .03})),
		Visibility: registry.Visibility(p.weighted(w("public internal"), []float64{.85, .15})),
		Trust:      registry.Trust(p.weighted(w("unsigned verified invalid untrusted error"), []float64{.55, .3, .05, .05, .05})),
		CreatedAt:  g.base,
		UpdatedAt:  updated,
	}
	a.CardURL = "https://" + a.Host + "/.well-known/agent-card.json"
	a.LastChangedAt = &updated
	a.Card = g.card(p, d, name, provider, a.Host)
	return a
}

func (g *Generator) card(p picker, d domain, name, provider, host string) *agentcard.Card {
	version := p.weighted(versions, []float64{.5, .4, .1})
	c := &agentcard.Card{
		Name:               name,
		Description:        sentence(p, d, 10+p.r.IntN(20)),
		Version:            fmt.Sprintf("%d.%d.%d", 1+p.r.IntN(3), p.r.IntN(10), p.r.IntN(20)),
		Shape:              map[string]string{"1.0": "v1", "0.3": "v0.3", "0.2": "v0.2"}[version],
		ProtocolVersions:   []string{version},
		Provider:           &agentcard.Provider{Organization: provider, URL: "https://" + host},
		DefaultInputModes:  []string{"text/plain"},
		DefaultOutputModes: []string{"text/plain"},
	}
	for _, b := range bindings {
		if b == "JSONRPC" && p.chance(.8) || b != "JSONRPC" && p.chance(.3) {
			c.Interfaces = append(c.Interfaces, agentcard.Interface{URL: "https://" + host + "/a2a/" + strings.ToLower(b), Binding: b, ProtocolVersion: version})
		}
	}
	if len(c.Interfaces) == 0 {
		c.Interfaces = append(c.Interfaces, agentcard.Interface{URL: "https://" + host + "/a2a", Binding: "JSONRPC", ProtocolVersion: version})
	}
	for range p.r.IntN(3) {
		kind := p.zipf(schemes)
		c.SecuritySchemes = append(c.SecuritySchemes, agentcard.SecurityScheme{Name: kind + "Auth", Kind: kind})
	}
	c.Capabilities.Streaming = p.chance(.5)
	c.Capabilities.PushNotifications = p.chance(.2)
	c.Capabilities.ExtendedAgentCard = p.chance(.1)
	for range p.r.IntN(3) {
		if p.chance(.5) {
			c.Capabilities.Extensions = append(c.Capabilities.Extensions, agentcard.Extension{URI: p.zipf(extensionURIs)})
		}
	}
	if p.chance(.6) {
		c.DefaultInputModes = append(c.DefaultInputModes, p.zipf(modesIn))
	}
	if p.chance(.6) {
		c.DefaultOutputModes = append(c.DefaultOutputModes, p.zipf(modesOut))
	}
	n := 1 + min(9, int(rand.NewZipf(p.r, 1.3, 2, 9).Uint64()))
	for k := range n {
		c.Skills = append(c.Skills, skill(p, d, k))
	}
	return c
}

func skill(p picker, d domain, k int) agentcard.Skill {
	verb, noun := p.zipf(d.verbs), p.zipf(d.nouns)
	s := agentcard.Skill{
		ID:          fmt.Sprintf("%s-%s-%d", verb, noun, k),
		Name:        titleCase(verb) + " " + noun,
		Description: titleCase(verb) + " " + noun + " " + sentence(p, d, 8+p.r.IntN(18)),
	}
	for range 1 + p.r.IntN(4) {
		t := p.zipf(d.tags)
		if p.chance(.1) {
			t = p.zipf(domains[p.r.IntN(len(domains))].tags) // cross-domain tag
		}
		if !contains(s.Tags, t) {
			s.Tags = append(s.Tags, t)
		}
	}
	for range p.r.IntN(3) {
		s.Examples = append(s.Examples, titleCase(verb)+" the "+p.zipf(d.nouns)+" for "+properNoun(p))
	}
	if p.chance(.3) {
		s.InputModes = []string{p.zipf(modesIn)}
	}
	if p.chance(.3) {
		s.OutputModes = []string{p.zipf(modesOut)}
	}
	return s
}

// sentence mixes domain nouns and verbs, general words and proper nouns
// (places, products) in Zipf proportions.
func sentence(p picker, d domain, n int) string {
	parts := make([]string, 0, n)
	for range n {
		switch x := p.r.Float64(); {
		case x < .35:
			parts = append(parts, p.zipf(d.nouns))
		case x < .5:
			parts = append(parts, p.zipf(d.verbs))
		case x < .9:
			parts = append(parts, p.zipf(general))
		default:
			parts = append(parts, properNoun(p))
		}
	}
	return strings.Join(parts, " ") + "."
}

var syllables = w("ka lo mi ra ven tor sa li qu ex an del vo ri no ta zen mar ul is po fe")

// properNoun is one of ~10,000 made-up names, Zipf-ranked: the long tail of
// a real vocabulary (places, products, brands).
func properNoun(p picker) string {
	k := rand.NewZipf(p.r, 1.05, 1, 9999).Uint64()
	n := len(syllables)
	s := syllables[k%uint64(n)] + syllables[(k/uint64(n))%uint64(n)]
	if k >= uint64(n*n) {
		s += syllables[(k/uint64(n*n))%uint64(n)]
	}
	return titleCase(s)
}

func titleCase(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

func contains(s []string, v string) bool {
	for _, e := range s {
		if e == v {
			return true
		}
	}
	return false
}
