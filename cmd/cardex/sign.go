package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"

	"github.com/cardexhq/cardex/agentcard/strictjson"
	"github.com/cardexhq/cardex/verifier"
)

// runSign is `cardex sign`: it signs a card under the spec profile and prints
// the signed card (CONTRACT.md §6 defaults: kid = RFC 7638 thumbprint, alg
// from the key).
func runSign(_ context.Context, e *env, args []string) int {
	fs := newFlagSet("cardex sign", e)
	keyFile := fs.String("key", "", "private key `FILE` (PEM: PKCS#8, SEC1 EC, PKCS#1 RSA; or a private JWK)")
	kid := fs.String("kid", "", "key id for the protected header (default: the key's RFC 7638 thumbprint)")
	jku := fs.String("jku", "", "JWKS `URL` for the protected header (trusted only on the agent's origin)")
	alg := fs.String("alg", "", "algorithm (default from the key: ES256, ES384, ES512, EdDSA or RS256)")
	fs.Usage = func() {
		fmt.Fprintln(e.stderr, "Usage: cardex sign --key KEY(.pem|.jwk) [--kid ID] [--jku URL] [--alg ALG] CARD.json|-")
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
	signed, err := verifier.Sign(card, key, opts)
	if err != nil {
		fmt.Fprintf(e.stderr, "cardex sign: %s: %v\n", pos[0], err)
		return exitUsage
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
