package verifier

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// coverageCard is a v1 card with a 1.0 and a 0.3 interface, a bearer
// scheme and a scope-less requirement: the v1 part of a hybrid.
const coverageCard = `{"name":"Agent","description":"d","version":"1",
"supportedInterfaces":[{"url":"https://agent.example/a2a","protocolBinding":"JSONRPC","protocolVersion":"1.0"},
{"url":"https://agent.example/a2a/v03","protocolBinding":"JSONRPC","protocolVersion":"0.3"}],
"provider":{"organization":"Example","url":"https://example.com"},
"capabilities":{"streaming":true},
"securitySchemes":{"bearer":{"httpAuthSecurityScheme":{"scheme":"Bearer"}}},
"securityRequirements":[{"schemes":{"bearer":{}}}],
"defaultInputModes":["text/plain"],"defaultOutputModes":["text/plain"],
"skills":[{"id":"s","name":"S","description":"d","tags":["t"],"securityRequirements":[{"schemes":{"bearer":{"list":["read"]}}}]}]}`

// inject adds members to the top level of card (JSON text) after signing:
// what someone who can edit the hosted file, but does not hold the key, does.
func inject(card, members string) string {
	return strings.TrimSuffix(strings.TrimSpace(card), "}") + "," + members + "}"
}

// signedWith signs card under profile p with a fresh ES256 key and returns
// the signed card text and the pinned JWKS that verifies it.
func signedWith(t *testing.T, p Profile, card string) (string, []byte) {
	t.Helper()
	k := mustKey(t, "P-256")
	prot, sig := signProfile(t, p, card, k, "ES256", `{"alg":"ES256","kid":"k1","typ":"JOSE"}`)
	return withSignatures(card, "["+sigEntry(prot, sig)+"]"), publicJWKS(t, k, "k1", "ES256")
}

// A signature that verifies is verified whatever the members it does not
// cover say: they are listed, flagged as disagreeing, and left out of the
// view (TestTheViewIsTheSignedProjection).
func TestUnsignedMembersThatDisagreeAreIgnored(t *testing.T) {
	cases := []struct {
		name, members string
		want          []string
	}{
		{"another endpoint", `"url":"https://evil.example/a2a"`, []string{"/url"}},
		{"another transport for a signed URL", `"url":"https://agent.example/a2a/v03","preferredTransport":"GRPC","protocolVersion":"0.3"`,
			[]string{"/url", "/preferredTransport", "/protocolVersion"}},
		{"a signed URL under another protocol version", `"url":"https://agent.example/a2a","protocolVersion":"0.3.0"`, []string{"/url", "/protocolVersion"}},
		{"an added interface", `"url":"https://agent.example/a2a/v03","protocolVersion":"0.3","additionalInterfaces":[{"url":"https://evil.example/rest","transport":"HTTP+JSON"}]`,
			[]string{"/url", "/protocolVersion", "/additionalInterfaces"}},
		{"the v0.3 extended-card flag", `"supportsAuthenticatedExtendedCard":true`, []string{"/supportsAuthenticatedExtendedCard"}},
		{"another requirement", `"security":[{"apikey":[]}]`, []string{"/security"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			signed, jwks := signedWith(t, ProfileSpec, coverageCard)
			v := verifyString(t, New(Config{}), inject(signed, c.members), VerifyOptions{Pinned: jwks})
			if v.Status != StatusVerified || v.Profile != string(ProfileSpecV1Only) || len(v.Thumbprints) != 1 ||
				!slices.Equal(v.Uncovered, c.want) || !v.LegacyDisagrees {
				t.Fatalf("verdict %+v", v)
			}
			s := v.Signatures[0]
			if s.Status != StatusVerified || s.Profile != string(ProfileSpecV1Only) || s.KeySource != SourcePinned || s.Thumbprint == "" {
				t.Fatalf("signature %+v", s)
			}
			if !slices.Equal(s.Unsigned, c.want) {
				t.Fatalf("unsigned %q, want %q", s.Unsigned, c.want)
			}
			if !strings.HasSuffix(s.Reason, fmt.Sprintf("under profile spec-v1-only; %d member(s) not covered by the signature, ignored (unsigned)", len(c.want))) {
				t.Fatalf("reason %q", s.Reason)
			}
		})
	}
}

func TestUnsignedProviderAndSchemeChangesAreNamed(t *testing.T) {
	noProvider := strings.Replace(coverageCard, `"provider":{"organization":"Example","url":"https://example.com"},`, "", 1)
	cases := []struct {
		name, card, members string
		profile             Profile
		edit                func(string) string
		want                []string
	}{
		// An empty provider is no member under the sdk profile, so one
		// holding only the non-v1 provider.name keeps the signature.
		{name: "a provider the signed card lacks", card: noProvider, profile: ProfileSDK,
			members: `"provider":{"name":"Evil Corp"}`, want: []string{"/provider/name"}},
		{name: "provider.name beside the signed organization", card: coverageCard,
			edit: func(s string) string {
				return strings.Replace(s, `"organization":"Example",`, `"organization":"Example","name":"Evil Corp",`, 1)
			}, want: []string{"/provider/name"}},
		{name: "a v0.3 form of the scheme pointing elsewhere", card: coverageCard,
			edit: func(s string) string {
				return strings.Replace(s, `"bearer":{"httpAuthSecurityScheme"`,
					`"bearer":{"type":"openIdConnect","openIdConnectUrl":"https://evil.example/.well-known/openid-configuration","httpAuthSecurityScheme"`, 1)
			}, want: []string{"/securitySchemes/bearer/type", "/securitySchemes/bearer/openIdConnectUrl"}},
		{name: "a v0.3 skill requirement", card: coverageCard,
			edit: func(s string) string {
				return strings.Replace(s, `"tags":["t"],`, `"tags":["t"],"security":[{"bearer":["admin"]}],`, 1)
			}, want: []string{"/skills/0/security"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := c.profile
			if p == "" {
				p = ProfileSpecV1Only
			}
			signed, jwks := signedWith(t, p, c.card)
			served := signed
			if c.members != "" {
				served = inject(signed, c.members)
			}
			if c.edit != nil {
				served = c.edit(served)
			}
			v := verifyString(t, New(Config{}), served, VerifyOptions{Pinned: jwks})
			if v.Status != StatusVerified || !v.LegacyDisagrees || !slices.Equal(v.Signatures[0].Unsigned, c.want) {
				t.Fatalf("verdict %+v", v)
			}
		})
	}
}

// The legitimate hybrid: the v0.3 rendering states exactly what the signed
// v1 members state (as a2a-js and a2a-python serve it to v0.3 clients).
// The signature stays verified and the unsigned members are listed.
func TestAgreeingLegacyMembersStayVerified(t *testing.T) {
	signed, jwks := signedWith(t, ProfileSpec, coverageCard)
	hybrid := inject(signed, `"url":"https://agent.example/a2a/v03","preferredTransport":"JSONRPC","protocolVersion":"0.3.0",`+
		`"supportsAuthenticatedExtendedCard":false,"security":[{"bearer":[]}],"x-vendor":{"any":"thing"}`)
	hybrid = strings.Replace(hybrid, `"bearer":{"httpAuthSecurityScheme"`, `"bearer":{"type":"http","scheme":"Bearer","httpAuthSecurityScheme"`, 1)
	hybrid = strings.Replace(hybrid, `"tags":["t"],`, `"tags":["t"],"security":[{"bearer":["read"]}],`, 1)
	hybrid = strings.Replace(hybrid, `"organization":"Example",`, `"organization":"Example","name":"Example",`, 1)
	v := verifyString(t, New(Config{}), hybrid, VerifyOptions{Pinned: jwks})
	if v.Status != StatusVerified || v.Profile != string(ProfileSpecV1Only) || len(v.Thumbprints) != 1 || v.LegacyDisagrees {
		t.Fatalf("verdict %+v", v)
	}
	want := []string{"/provider/name", "/securitySchemes/bearer/type", "/securitySchemes/bearer/scheme", "/skills/0/security",
		"/url", "/preferredTransport", "/protocolVersion", "/security"}
	if got := v.Signatures[0].Unsigned; !slices.Equal(got, want) {
		t.Fatalf("unsigned %q, want %q", got, want)
	}
}

// The sdk profile signs the v1 members without empty values; an endpoint
// added beside them is as unsigned as under spec-v1-only.
func TestUnsignedEndpointBesideAnSDKSignature(t *testing.T) {
	card := strings.Replace(coverageCard, `"version":"1",`, `"version":"1","documentationUrl":"",`, 1)
	signed, jwks := signedWith(t, ProfileSDK, card)
	v := verifyString(t, New(Config{}), signed, VerifyOptions{Pinned: jwks})
	if v.Status != StatusVerified || v.Profile != string(ProfileSDK) || len(v.Signatures[0].Unsigned) != 0 {
		t.Fatalf("as signed: %+v", v)
	}
	v = verifyString(t, New(Config{}), inject(signed, `"preferredTransport":"HTTP+JSON","url":"https://agent.example/a2a/v03"`), VerifyOptions{Pinned: jwks})
	s := v.Signatures[0]
	if v.Status != StatusVerified || !v.LegacyDisagrees || s.Profile != string(ProfileSDK) || !slices.Equal(s.Unsigned, []string{"/preferredTransport", "/url"}) {
		t.Fatalf("injected: %+v", v)
	}
}

// With two verified signatures, the one whose profile covers the most
// makes the view: here spec, which covers the added URL.
func TestAnotherSignatureCoveringTheUnsignedMembersVerifies(t *testing.T) {
	k := mustKey(t, "P-256")
	hybrid := inject(coverageCard, `"url":"https://elsewhere.example/a2a"`)
	p1, s1 := signProfile(t, ProfileSpecV1Only, hybrid, k, "ES256", `{"alg":"ES256","kid":"k1","typ":"JOSE"}`)
	p2, s2 := signProfile(t, ProfileSpec, hybrid, k, "ES256", `{"alg":"ES256","kid":"k1","typ":"JOSE"}`)
	card := withSignatures(hybrid, "["+sigEntry(p1, s1)+","+sigEntry(p2, s2)+"]")
	v := verifyString(t, New(Config{}), card, VerifyOptions{Pinned: publicJWKS(t, k, "k1", "ES256")})
	if v.Status != StatusVerified || v.Profile != string(ProfileSpec) || v.Signatures[0].Status != StatusVerified ||
		!slices.Equal(v.Signatures[0].Unsigned, []string{"/url"}) || v.Signatures[1].Status != StatusVerified ||
		len(v.Signatures[1].Unsigned) != 0 || len(v.Uncovered) != 0 || v.LegacyDisagrees {
		t.Fatalf("%+v", v)
	}
}
