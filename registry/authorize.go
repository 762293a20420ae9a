package registry

// Need is who may call an operation at all: checked before its input is
// read or its agent looked at, so an anonymous caller learns it needs a
// token (401) and a token of the wrong role that it may not (403), whatever
// the request says (docs/security.md "Tokens and roles"). Operations on one
// agent check the agent's host for publisher tokens afterwards.
type Need int

// Needs, from the least to the most.
const (
	NeedAnyone    Need = iota // anonymous callers too
	NeedToken                 // any valid token
	NeedPublisher             // a publisher token (for its own hosts) or an admin token
	NeedAdmin                 // an admin token
)

// Authorize reports whether p may call an operation that needs n:
// ErrUnauthorized for an anonymous caller when a token is needed,
// ErrForbidden for a token whose role is not enough.
func Authorize(p Principal, n Need) error {
	switch {
	case n == NeedAnyone:
		return nil
	case p.Role == "":
		return ErrUnauthorized
	case n == NeedToken, p.isAdmin():
		return nil
	case n == NeedPublisher && p.Role == RolePublisher:
		return nil
	}
	return ErrForbidden
}

// ActionNeed is what Act with action a needs: a publisher token may
// withdraw (remove) its own hosts' agents; every other action is an
// admin's.
func ActionNeed(a Action) Need {
	if a == ActionRemove {
		return NeedPublisher
	}
	return NeedAdmin
}

func requireAdmin(p Principal) error { return Authorize(p, NeedAdmin) }
