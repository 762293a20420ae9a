package registry

import (
	"errors"
	"fmt"
	"time"

	"github.com/cardexhq/cardex/cardurl"
)

// Sentinel errors of the use cases. The API maps them to problem types
// (docs/api.md); callers test them with errors.Is.
var (
	ErrNotFound          = errors.New("not found")
	ErrForbidden         = errors.New("forbidden")
	ErrUnauthorized      = errors.New("unauthorized")
	ErrInvalidTransition = errors.New("invalid transition")
	ErrAgentRemoved      = errors.New("agent removed")
	// ErrUnavailable means the database cannot take the request right now
	// (busy past the wait, read-only, disk full, connection lost): answer
	// 503 with Retry-After (docs/threats.md F.63, F.66).
	ErrUnavailable      = errors.New("storage unavailable")
	ErrLeaseLost        = errors.New("lease lost")
	ErrInvalidPageToken = errors.New("invalid page token")
	ErrDuplicate        = errors.New("duplicate agent")
	ErrVersionConflict  = errors.New("version conflict")
	ErrInvalidURL       = cardurl.ErrInvalid
	ErrValidation       = errors.New("validation failed")
	// ErrDataDirLocked is returned by Open when another server holds the
	// data directory's lock file (docs/threats.md F.67).
	ErrDataDirLocked = errors.New("data directory is locked by another Cardex server")
	// ErrNoDatabase is returned by Open with OpenOptions.MustExist when
	// the data directory or the PostgreSQL database holds no Cardex
	// database yet: the tools that work on a server's store refuse to
	// create a new, empty one (docs/configuration.md "Exit codes").
	ErrNoDatabase = errors.New("no Cardex database")
)

// ErrRateLimited: the request would go past a limit of the registry's own
// (a claim's verification attempts, a requester's unverified claims, a
// host's claim fetches); answer 429 with Retry-After (*RetryError).
var ErrRateLimited = errors.New("rate limited")

// RetryError is ErrRateLimited with the wait and what the client is told.
type RetryError struct {
	Wait   time.Duration
	Detail string
}

func (e *RetryError) Error() string { return "rate limited: " + e.Detail }

// Is makes errors.Is(err, ErrRateLimited) true.
func (e *RetryError) Is(target error) bool { return target == ErrRateLimited }

// DuplicateError says the card URL is already registered as AgentID.
type DuplicateError struct{ AgentID string }

func (e *DuplicateError) Error() string { return "duplicate agent: already registered as " + e.AgentID }

// Is makes errors.Is(err, ErrDuplicate) true.
func (e *DuplicateError) Is(target error) bool { return target == ErrDuplicate }

// VersionConflictError says an approval named a version that is not the one
// under review (docs/threats.md F.65).
type VersionConflictError struct{ CurrentVersionSeq int64 }

func (e *VersionConflictError) Error() string {
	return fmt.Sprintf("card changed, review again: the version under review is %d", e.CurrentVersionSeq)
}

// Is makes errors.Is(err, ErrVersionConflict) true.
func (e *VersionConflictError) Is(target error) bool { return target == ErrVersionConflict }

// URL error codes: the card-URL rule's (package cardurl).
const (
	URLCodeInvalid  = cardurl.CodeInvalid
	URLCodeReserved = cardurl.CodeReserved
)

// URLError rejects a submitted card URL: the card-URL rule's error, under
// the name the registry's callers know it by.
type URLError = cardurl.Error

// FieldError is one invalid input field, located by a JSON pointer.
type FieldError struct {
	Pointer string `json:"pointer"`
	Code    string `json:"code"`
	Message string `json:"message"`
}

// ValidationError lists invalid input fields.
type ValidationError struct{ Errors []FieldError }

func (e *ValidationError) Error() string {
	if len(e.Errors) == 0 {
		return "validation failed"
	}
	return "validation failed: " + e.Errors[0].Pointer + ": " + e.Errors[0].Message
}

// Is makes errors.Is(err, ErrValidation) true.
func (e *ValidationError) Is(target error) bool { return target == ErrValidation }

func invalidField(pointer, code, message string) error {
	return &ValidationError{Errors: []FieldError{{Pointer: pointer, Code: code, Message: message}}}
}
