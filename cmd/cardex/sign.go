package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"

	"github.com/cardexhq/cardex/strictjson"
	"github.com/cardexhq/cardex/verifier"
)

// runSign is `cardex sign`: it signs a card and prints the signed card
// (kid = RFC 7638 thumbprint, alg from the key, by default). The default
// profile, portable, makes a signature every verifier accepts: the card's
// "unset" values are removed so the spec-literal and SDK forms are the same
// bytes, and a card holding members that keep them apart is refused
// (verifier.PreparePortable). --profile signs one named form instead, and
// stderr says which other forms differ (docs/publishing.md).
// profileUsers names who computes each canonical form.
var profileUsers = map[verifier.Profile]string{
	verifier.ProfileSpec:         "spec-literal verifiers, A2A §8.4.1",
	verifier.ProfileSpecV1Only:   "spec rules over the v1 members only",
	verifier.ProfileSDK:          "the a2a-js and a2a-python verifiers",
	verifier.ProfilePythonLegacy: "a2a-python before its RFC 8785 fix: non-ASCII text, number spelling",
	verifier.ProfileRaw:          "the card as served, without signatures",
}

func runSign(_ context.Context, e *env, args []string) int {
	fs := newFlagSet("cardex sign", e)
	keyFile := fs.String("key", "", "private key `FILE` (PEM: PKCS#8, SEC1 EC, PKCS#1 RSA; or a private JWK)")
	kid := fs.String("kid", "", "key id for the protected header (default: the key's RFC 7638 thumbprint)")
	jku := fs.String("jku", "", "JWKS `URL` for the protected header (trusted only on the agent's origin)")
	alg := fs.String("alg", "", "algorithm (default from the key: ES256, ES384, ES512, EdDSA or RS256)")
	profile := fs.String("profile", "portable", "canonical form to sign: portable (every verifier accepts it), spec, spec-v1-only, sdk, python-legacy or raw")
	fs.Usage = func() {
		fmt.Fprintln(e.stderr, "Usage: cardex sign --key KEY(.pem|.jwk) [--kid ID] [--jku URL] [--alg ALG] [--profile P] CARD.json|-")
		fs.PrintDefaults()
	}
	pos, code := parseFlagsAndArgs(fs, args)
	if code >= 0 {
		return code
	}
	if len(pos) != 1 || *keyFile == "" {
		fmt.Fprintln(e.stderr, "cardex sign: --key and exactly one card are required")
		fs.Usage()
		return exitUsage
	}
	keyData, err := os.ReadFile(*keyFile)
	if err != nil {
		fmt.Fprintf(e.stderr, "cardex sign: --key: %v\n", err)
		return exitUsage
	}
	key, err := verifier.LoadSigningKey(keyData)
	if err != nil {
		fmt.Fprintf(e.stderr, "cardex sign: --key %s: %v\n", *keyFile, err)
		return exitUsage
	}
	opts := verifier.SignOptions{Kid: *kid, Jku: *jku}
	if *alg != "" {
		if opts.Alg, err = verifier.ParseAlg(*alg); err != nil {
			fmt.Fprintf(e.stderr, "cardex sign: --alg: %v\n", err)
			return exitUsage
		}
	}
	portable := *profile == "portable"
	if !portable {
		if opts.Profile, err = verifier.ParseProfile(*profile); err != nil {
			fmt.Fprintf(e.stderr, "cardex sign: --profile: %v (or portable)\n", err)
			return exitUsage
		}
	}
	var card []byte
	if pos[0] == "-" {
		card, err = io.ReadAll(io.LimitReader(e.stdin, int64(strictjson.DefaultLimits.MaxBytes)+1))
	} else {
		card, err = os.ReadFile(pos[0])
	}
	if err != nil {
		fmt.Fprintf(e.stderr, "cardex sign: %v\n", err)
		return exitUsage
	}
	if lintRefuses(e.stderr, "cardex sign", pos[0], card) {
		return exitFail
	}
	if portable {
		prepared, removed, err := verifier.PreparePortable(card)
		if err != nil {
			fmt.Fprintf(e.stderr, "cardex sign: %s: %v\n", pos[0], err)
			return exitUsage
		}
		if len(removed) > 0 {
			fmt.Fprintf(e.stderr, "cardex sign: removed %d members that mean \"unset\", so that spec-literal and SDK verifiers sign the same bytes:\n", len(removed))
			for _, r := range removed {
				fmt.Fprintf(e.stderr, "  %s\n", r)
			}
		}
		card, opts.Profile = prepared, verifier.ProfileSpec
	}
	signed, err := verifier.Sign(card, key, opts)
	if err != nil {
		fmt.Fprintf(e.stderr, "cardex sign: %s: %v\n", pos[0], err)
		return exitUsage
	}
	if differ, err := verifier.DifferingProfiles(opts.Profile, card); err == nil && len(differ) > 0 {
		fmt.Fprintf(e.stderr, "cardex sign: signed the %s form; verifiers that compute another form will not accept it:\n", opts.Profile)
		for _, p := range differ {
			fmt.Fprintf(e.stderr, "  %s (%s) differs\n", p, profileUsers[p])
		}
	}
	// Indentation changes whitespace only; strings and number literals stay
	// byte for byte as in the card.
	var out bytes.Buffer
	if err := json.Indent(&out, signed, "", "  "); err != nil {
		fmt.Fprintf(e.stderr, "cardex sign: %v\n", err)
		return exitFail
	}
	out.WriteByte('\n')
	if _, err := e.stdout.Write(out.Bytes()); err != nil {
		return exitFail
	}
	return exitOK
}
