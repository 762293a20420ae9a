package agentfleet

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"time"
)

// CA is a throwaway certificate authority for TLS fleets and TLS failure
// tests (docs/threats.md B.23: wrong host, expired, self-signed).
type CA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	der  []byte
}

// NewCA creates a CA valid from an hour ago for a day.
func NewCA(name string) (*CA, error) { return newCA(name, 24*time.Hour) }

// newCA creates a CA valid from an hour ago for validity.
func newCA(name string, validity time.Duration) (*CA, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber:          serial(),
		Subject:               pkix.Name{CommonName: name, Organization: []string{"Cardex test"}},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(validity),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, err
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	return &CA{cert: cert, key: key, der: der}, nil
}

// Pool is a pool holding only this CA (pass it as fetch.Policy.RootCAs).
func (ca *CA) Pool() *x509.CertPool {
	p := x509.NewCertPool()
	p.AddCert(ca.cert)
	return p
}

// PEM is the CA certificate in PEM form (for --ca-file).
func (ca *CA) PEM() []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ca.der})
}

// LeafSpec describes a server certificate to issue.
type LeafSpec struct {
	IPs       []net.IP
	DNSNames  []string
	NotBefore time.Time // zero: an hour ago
	NotAfter  time.Time // zero: a day from now
}

// Issue signs a server certificate for spec.
func (ca *CA) Issue(spec LeafSpec) (tls.Certificate, error) {
	return issue(spec, ca.cert, ca.key)
}

// SelfSigned returns a server certificate signed by its own key: no pool
// trusts it.
func SelfSigned(spec LeafSpec) (tls.Certificate, error) {
	return issue(spec, nil, nil)
}

func issue(spec LeafSpec, parent *x509.Certificate, parentKey *ecdsa.PrivateKey) (tls.Certificate, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, err
	}
	now := time.Now()
	if spec.NotBefore.IsZero() {
		spec.NotBefore = now.Add(-time.Hour)
	}
	if spec.NotAfter.IsZero() {
		spec.NotAfter = now.Add(24 * time.Hour)
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial(),
		Subject:      pkix.Name{CommonName: "cardex fleet agent"},
		NotBefore:    spec.NotBefore,
		NotAfter:     spec.NotAfter,
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IPAddresses:  spec.IPs,
		DNSNames:     spec.DNSNames,
	}
	if parent == nil {
		parent, parentKey = tmpl, key
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, &key.PublicKey, parentKey)
	if err != nil {
		return tls.Certificate{}, err
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, nil
}

func serial() *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 120))
	if err != nil {
		panic(err) // crypto/rand does not fail on supported platforms
	}
	return n
}
