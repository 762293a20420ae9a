package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/cardexhq/cardex/verifier"
)

// runKeys is `cardex keys`: make the key pair a publisher signs with and
// print the JWK Set that goes at https://{host}/.well-known/jwks.json, so
// nobody derives a JWK by hand (docs/publishing.md).
//
//	cardex keys generate --out KEY.pem [--alg ES256] [--kid ID]   new private key (0600) + its JWKS on stdout
//	cardex keys jwks [--alg ALG] [--kid ID] KEY.pem|KEY.jwk        the JWKS of an existing private key
func runKeys(_ context.Context, e *env, args []string) int {
	usage := func() {
		fmt.Fprintln(e.stderr, "Usage: cardex keys generate --out KEY.pem [--alg ES256|ES384|ES512|EdDSA|RS256|PS256] [--kid ID]")
		fmt.Fprintln(e.stderr, "       cardex keys jwks [--alg ALG] [--kid ID] KEY.pem|KEY.jwk")
	}
	if len(args) == 0 {
		usage()
		return exitUsage
	}
	switch args[0] {
	case "generate":
		return keysGenerate(e, args[1:])
	case "jwks":
		return keysJWKS(e, args[1:])
	case "-h", "--help", "help":
		usage()
		return exitOK
	}
	fmt.Fprintf(e.stderr, "cardex keys: unknown subcommand %q\n", args[0])
	usage()
	return exitUsage
}

func keysGenerate(e *env, args []string) int {
	fs := newFlagSet("cardex keys generate", e)
	out := fs.String("out", "", "`FILE` to write the private key to (PKCS#8 PEM, mode 0600; never overwritten)")
	alg := fs.String("alg", "ES256", "algorithm the key is for: ES256, ES384, ES512, EdDSA, RS256 … PS512")
	kid := fs.String("kid", "", "key id in the JWKS (default: the key's RFC 7638 thumbprint, cardex sign's default kid)")
	pos, code := parseFlagsAndArgs(fs, args)
	if code >= 0 {
		return code
	}
	if len(pos) != 0 || *out == "" {
		fmt.Fprintln(e.stderr, "cardex keys generate: --out is required and takes no arguments")
		fs.PrintDefaults()
		return exitUsage
	}
	a, err := verifier.ParseAlg(*alg)
	if err != nil {
		fmt.Fprintf(e.stderr, "cardex keys generate: --alg: %v\n", err)
		return exitUsage
	}
	key, err := verifier.GenerateKey(a)
	if err != nil {
		fmt.Fprintf(e.stderr, "cardex keys generate: %v\n", err)
		return exitFail
	}
	pemBytes, err := verifier.MarshalPrivateKeyPEM(key)
	if err != nil {
		fmt.Fprintf(e.stderr, "cardex keys generate: %v\n", err)
		return exitFail
	}
	jwks, err := verifier.PublicJWKS(key, *kid, a)
	if err != nil {
		fmt.Fprintf(e.stderr, "cardex keys generate: %v\n", err)
		return exitFail
	}
	if err := writeNew(*out, pemBytes); err != nil {
		fmt.Fprintf(e.stderr, "cardex keys generate: --out: %v\n", err)
		return exitUsage
	}
	if _, err := e.stdout.Write(jwks); err != nil {
		return exitFail
	}
	fmt.Fprintf(e.stderr, "cardex keys: private key written to %s; publish the JWKS above at https://{your host}/.well-known/jwks.json\n", *out)
	return exitOK
}

// writeNew creates path with the private key; an existing file is an
// error, never overwritten (it may be the key a published JWKS names).
func writeNew(path string, data []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		if errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("%s exists; keys are never overwritten", path)
		}
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		os.Remove(path)
		return err
	}
	return f.Close()
}

func keysJWKS(e *env, args []string) int {
	fs := newFlagSet("cardex keys jwks", e)
	alg := fs.String("alg", "", "algorithm (default: the JWK's alg, else from the key)")
	kid := fs.String("kid", "", "key id (default: the key's RFC 7638 thumbprint)")
	pos, code := parseFlagsAndArgs(fs, args)
	if code >= 0 {
		return code
	}
	if len(pos) != 1 {
		fmt.Fprintln(e.stderr, "cardex keys jwks: exactly one private key file is required")
		return exitUsage
	}
	data, err := os.ReadFile(pos[0])
	if err != nil {
		fmt.Fprintf(e.stderr, "cardex keys jwks: %v\n", err)
		return exitUsage
	}
	key, err := verifier.LoadSigningKey(data)
	if err != nil {
		fmt.Fprintf(e.stderr, "cardex keys jwks: %s: %v\n", pos[0], err)
		return exitUsage
	}
	a := ""
	if *alg != "" {
		if a, err = verifier.ParseAlg(*alg); err != nil {
			fmt.Fprintf(e.stderr, "cardex keys jwks: --alg: %v\n", err)
			return exitUsage
		}
	}
	jwks, err := verifier.PublicJWKS(key, *kid, a)
	if err != nil {
		fmt.Fprintf(e.stderr, "cardex keys jwks: %s: %v\n", pos[0], err)
		return exitUsage
	}
	if _, err := e.stdout.Write(jwks); err != nil {
		return exitFail
	}
	return exitOK
}
