package verifier

// Statuses of a card and of each signature (docs/verification.md).
const (
	StatusVerified  = "verified"
	StatusError     = "error"     // a trusted source could not be fetched or lacks the kid
	StatusUntrusted = "untrusted" // only sources Cardex never trusts were named
	StatusInvalid   = "invalid"   // malformed, disallowed, mismatched or not verifying
	StatusUnsigned  = "unsigned"  // card only: no signatures
)

// Key sources (docs/verification.md).
const (
	SourcePinned    = "pinned"
	SourceJKU       = "jku"
	SourceWellKnown = "well-known"
	SourceNone      = "none"
)

// Verdict is the result of verifying one card. Its JSON is the shape
// `cardex verify --json` prints and the API stores (docs/verification.md).
type Verdict struct {
	Status      string            `json:"status"`
	Profile     string            `json:"profile"` // of the first verified signature, else ""
	Signatures  []SignatureResult `json:"signatures"`
	Thumbprints []string          `json:"thumbprints"` // RFC 7638 SHA-256 of keys that verified
}

// SignatureResult is the outcome for one entry of the card's `signatures`.
type SignatureResult struct {
	Index      int    `json:"index"`
	Kid        string `json:"kid"`
	Alg        string `json:"alg"`
	KeySource  string `json:"keySource"`
	Profile    string `json:"profile"`
	Status     string `json:"status"`
	Reason     string `json:"reason"`
	JKU        string `json:"jku,omitempty"`
	Thumbprint string `json:"thumbprint,omitempty"`
	// Unsigned are the JSON pointers of members Cardex reads that the
	// profile does not sign: for a verified signature those that agree
	// with the signed members (a hybrid card's v0.3 rendering), for one
	// made invalid by them those that disagree (docs/verification.md).
	Unsigned []string `json:"unsigned,omitempty"`
}

// rank orders statuses for the card verdict: verified > error > untrusted >
// invalid (docs/verification.md).
func rank(status string) int {
	switch status {
	case StatusVerified:
		return 3
	case StatusError:
		return 2
	case StatusUntrusted:
		return 1
	}
	return 0
}

// Verified reports whether at least one signature verified.
func (v Verdict) Verified() bool { return v.Status == StatusVerified }
