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
	Status string `json:"status"`
	// Profile is that of the verified signature whose profile covers the
	// most (ViewTree: Cardex's view of the card), else "".
	Profile     string            `json:"profile"`
	Signatures  []SignatureResult `json:"signatures"`
	Thumbprints []string          `json:"thumbprints"` // RFC 7638 SHA-256 of keys that verified
	// Uncovered are the JSON pointers of the members Cardex reads that
	// Profile does not cover: not shown, served, indexed or probed.
	Uncovered []string `json:"uncovered,omitempty"`
	// LegacyDisagrees: some of Uncovered state something the signed
	// members do not, so the document as received must not reach a v0.3
	// client (docs/verification.md "Serving cards").
	LegacyDisagrees bool `json:"-"`
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
	// profile of a verified signature does not sign: not covered by the
	// signature, ignored (docs/verification.md).
	Unsigned []string `json:"unsigned,omitempty"`

	disagreeing bool // some of Unsigned disagree with the signed members
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

// breadth orders profiles by how much of a card they cover: raw and spec
// every member, spec-v1-only the v1 members, the sdk profiles the v1
// members with a value.
func breadth(p string) int {
	switch Profile(p) {
	case ProfileRaw, ProfileSpec:
		return 3
	case ProfileSpecV1Only:
		return 2
	}
	return 1
}
