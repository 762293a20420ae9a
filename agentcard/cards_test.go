package agentcard

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// readCard returns the testdata card whose file name starts with prefix
// (exactly one must match).
func readCard(t testing.TB, prefix string) []byte {
	t.Helper()
	m, err := filepath.Glob(filepath.Join("testdata", "cards", prefix+"*"))
	if err != nil || len(m) != 1 {
		t.Fatalf("card %q: %d matches (%v)", prefix, len(m), err)
	}
	data, err := os.ReadFile(m[0])
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func mustParse(t testing.TB, data []byte, opts Options) *Parsed {
	t.Helper()
	p, err := Parse(data, opts)
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	return p
}

// codes returns the distinct problem codes, sorted.
func codes(ps []Problem) []string {
	var out []string
	for _, p := range ps {
		if !slices.Contains(out, p.Code) {
			out = append(out, p.Code)
		}
	}
	slices.Sort(out)
	return out
}

func bindings(c *Card) []string {
	var out []string
	for _, it := range c.Interfaces {
		out = append(out, it.Binding+"@"+it.ProtocolVersion)
	}
	return out
}

func kinds(c *Card) []string {
	var out []string
	for _, s := range c.SecuritySchemes {
		out = append(out, s.Name+"="+s.Kind)
	}
	return out
}

// TestEveryTestdataCard pins what testdata/README.md says each card must
// produce: accepted or rejected, shape, interfaces with their versions,
// protocol versions, scheme kinds and the exact set of warning codes.
func TestEveryTestdataCard(t *testing.T) {
	type want struct {
		prefix   string
		reason   error  // non-nil: rejected
		code     string // the rejection's problem code
		shape    string
		versions []string
		ifaces   []string
		schemes  []string
		warnings []string
	}
	jsonrpc3 := func(v string) []string { return []string{"JSONRPC@" + v, "GRPC@" + v, "HTTP+JSON@" + v} }
	google := []string{"google=openIdConnect"}
	localhost := []string{CodeInsecureURL, CodeInternalAddress}
	cases := []want{
		{prefix: "A2A_main_", shape: ShapeV1, versions: []string{"1.0"}, ifaces: jsonrpc3("1.0"), schemes: google},
		{prefix: "A2A_v1.0.0_", shape: ShapeHybrid, versions: []string{"1.0"}, ifaces: jsonrpc3("1.0"), schemes: google},
		{prefix: "A2A_v0.3.0_", shape: ShapeV03, versions: []string{"0.2"}, ifaces: jsonrpc3("0.2"), schemes: google},
		{prefix: "A2A_v0.2.6_", shape: ShapeV02, versions: []string{"0.2"}, ifaces: jsonrpc3("0.2"), schemes: google},
		{prefix: "A2A_v0.2.0_", reason: ErrNotJSON, code: CodeInvalidJSON},
		{prefix: "A2A_v0.1.0_", shape: ShapeV01, versions: []string{"0.1"}, ifaces: []string{"JSONRPC@0.1"},
			schemes: []string{"OAuth2=oauth2"}, warnings: []string{CodeLegacyAuth}},
		// A v0.1 card with a name but no endpoint: not a listable agent.
		{prefix: "A2A_pr300_", reason: ErrInvalidCard, code: CodeNoEndpoint},
		{prefix: "A2A_pr258_", reason: ErrNotACard, code: CodeNotACard},
		{prefix: "A2A_pr1592_", shape: ShapeV1, versions: []string{"0.3"}, ifaces: []string{"JSONRPC@0.3"}},
		{prefix: "a2a-samples_samples_python_agents_a2a_mcp_agent_cards_air", shape: ShapeV02, versions: []string{"0.2"}, ifaces: []string{"JSONRPC@0.2"}, warnings: localhost},
		{prefix: "a2a-samples_samples_python_agents_a2a_mcp_agent_cards_car", shape: ShapeV02, versions: []string{"0.2"}, ifaces: []string{"JSONRPC@0.2"}, warnings: localhost},
		{prefix: "a2a-samples_samples_python_agents_a2a_mcp_agent_cards_hotel", shape: ShapeV02, versions: []string{"0.2"}, ifaces: []string{"JSONRPC@0.2"}, warnings: localhost},
		{prefix: "a2a-samples_samples_python_agents_a2a_mcp_agent_cards_orch", shape: ShapeV02, versions: []string{"0.2"}, ifaces: []string{"JSONRPC@0.2"}, warnings: localhost},
		{prefix: "a2a-samples_samples_python_agents_a2a_mcp_agent_cards_plan", shape: ShapeV02, versions: []string{"0.2"}, ifaces: []string{"JSONRPC@0.2"}, warnings: localhost},
		{prefix: "a2a-samples_samples_python_agents_adk_currency", shape: ShapeV03, versions: []string{"0.3"}, ifaces: []string{"JSONRPC@0.3"}, warnings: localhost},
		{prefix: "a2a-samples_samples_python_agents_adk_skills", shape: ShapeV1, versions: []string{"1.0", "0.3"},
			ifaces: []string{"JSONRPC@1.0", "JSONRPC@0.3"}, warnings: localhost},
		{prefix: "a2a-go_a2a_json", shape: ShapeV1, versions: []string{"1.0"}, ifaces: jsonrpc3("1.0"), schemes: google},
		{prefix: "a2a-go_a2acompat", shape: ShapeV03, versions: []string{"0.3"}, ifaces: jsonrpc3("0.3"), schemes: google,
			warnings: []string{CodeUndefinedScheme}},
		{prefix: "a2a-python_", shape: ShapeHybrid, versions: []string{"1.0", "0.3"},
			ifaces:   []string{"JSONRPC@1.0", "JSONRPC@0.3", "GRPC@1.0", "GRPC@0.3", "HTTP+JSON@1.0", "HTTP+JSON@0.3"},
			warnings: []string{CodeEmptyRequired, CodeInsecureURL}},
		// The TCK's minimal signing vector lists no endpoint: the verifier
		// checks its signature (verifier tests), the registry never lists it.
		{prefix: "a2a-tck_tests_unit_agent_card_card_signing_vectors.json_cardsign-sign-001", reason: ErrInvalidCard, code: CodeNoEndpoint},
		{prefix: "a2a-tck_tests_unit_agent_card_card_signing_vectors.json_cardsign-sign-002", shape: ShapeV03, versions: []string{"0.3"},
			ifaces: []string{"JSONRPC@0.3"}, schemes: []string{"oauth=oauth2"}, warnings: []string{CodeMissingRequired}},
		{prefix: "GENERATED_a2a-go-pr368_a2acrypto.Sign_edge", shape: ShapeV1, versions: []string{"1.0"}, ifaces: []string{"JSONRPC@1.0"},
			schemes: []string{"bearer=http"}},
		{prefix: "GENERATED_a2a-go-pr368_a2acrypto.Sign_spec", shape: ShapeV1, versions: []string{"1.0"}, ifaces: jsonrpc3("1.0"), schemes: google},
		{prefix: "GENERATED_a2a-js-1.3.0_generateAgentCardSignature_edge", shape: ShapeV1, versions: []string{"1.0"},
			ifaces: []string{"JSONRPC@1.0"}, schemes: []string{"bearer=http"}},
		{prefix: "GENERATED_a2a-js-1.3.0_generateAgentCardSignature_spec", shape: ShapeV1, versions: []string{"1.0"}, ifaces: jsonrpc3("1.0"), schemes: google},
		{prefix: "wild_0xYuvi_", shape: ShapeV03, versions: []string{"0.3"}, ifaces: []string{"JSONRPC@0.3"}, schemes: []string{"zyndSig=http"}},
		{prefix: "wild_BuyWhere_", shape: ShapeV02, versions: []string{"0.2"}, ifaces: []string{"JSONRPC@0.2"}},
		{prefix: "wild_Instabidsai_", shape: ShapeV01, versions: []string{"0.1"}, ifaces: []string{"JSONRPC@0.1"},
			schemes: []string{"bearer=http"}, warnings: []string{CodeLegacyAuth, CodeMissingRequired}},
		{prefix: "wild_Laisky_", shape: ShapeV02, versions: []string{"0.2"}, ifaces: []string{"JSONRPC@0.2"}, warnings: []string{CodeProviderNameAlias}},
	}
	all, _ := filepath.Glob("testdata/cards/*.json")
	covered := 0
	for _, f := range all {
		for _, c := range cases {
			if strings.HasPrefix(filepath.Base(f), c.prefix) {
				covered++
			}
		}
	}
	if covered != len(all) || len(all) != 29 {
		t.Fatalf("table covers %d of %d testdata cards", covered, len(all))
	}
	for _, c := range cases {
		t.Run(c.prefix, func(t *testing.T) {
			p, err := Parse(readCard(t, c.prefix), Options{})
			if c.reason != nil {
				var inv *InvalidError
				if !errors.Is(err, ErrInvalidCard) || !errors.Is(err, c.reason) || !errors.As(err, &inv) {
					t.Fatalf("err = %v, want %v", err, c.reason)
				}
				var errs []string
				for _, p := range inv.Problems {
					if p.Severity == SeverityError {
						errs = append(errs, p.Code)
					}
				}
				if !slices.Equal(errs, []string{c.code}) {
					t.Fatalf("problems = %+v, want one %s error", inv.Problems, c.code)
				}
				return
			}
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			card := p.Card
			if card.Shape != c.shape {
				t.Errorf("shape = %q, want %q", card.Shape, c.shape)
			}
			if !slices.Equal(card.ProtocolVersions, c.versions) {
				t.Errorf("protocolVersions = %q, want %q", card.ProtocolVersions, c.versions)
			}
			if got := bindings(card); !slices.Equal(got, c.ifaces) {
				t.Errorf("interfaces = %q, want %q", got, c.ifaces)
			}
			if got := kinds(card); !slices.Equal(got, c.schemes) {
				t.Errorf("schemes = %q, want %q", got, c.schemes)
			}
			if got := codes(p.Problems); !slices.Equal(got, c.warnings) {
				t.Errorf("warning codes = %q, want %q\n%+v", got, c.warnings, p.Problems)
			}
			for _, pr := range p.Problems {
				if pr.Severity != SeverityWarning || pr.Message == "" {
					t.Errorf("accepted card has %+v", pr)
				}
			}
			if p.Tree == nil || len(p.Raw) == 0 || card.Skills == nil || card.Interfaces == nil || card.SecuritySchemes == nil ||
				card.SecurityRequirements == nil || card.DefaultInputModes == nil || card.ProtocolVersions == nil {
				t.Errorf("nil slice in normalized card: %+v", card)
			}
		})
	}
}
