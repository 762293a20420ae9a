package registry

import (
	"github.com/cardexhq/cardex/cardurl"

	"fmt"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"gorm.io/gorm"
)

// Who may see an agent: the one rule every face of Cardex applies (lists,
// search, tags, skills, the change log, the record, its card, versions and
// fetches, the web pages). docs/security.md "Who sees what" states it for
// users; this file is its only implementation. The SQL scope, the index
// terms and the Go predicates below are three spellings of it, held equal by
// TestVisibilityRuleAgrees over every combination of the columns it reads;
// the change log's spelling (changeSQL, feedKind) is held to it by
// TestChangeFeedRuleAgrees, and for rows older than migration 00120 by
// TestVisibilityRuleAgrees.
//
// Listing (lists, search, /tags, /skills, the catalogue):
//   - anonymous callers list approved, public agents whose health is not gone;
//   - publisher tokens, whether a host claim or an operator made them, list
//     what anonymous callers list plus every agent of their own hosts that
//     is not removed (a claim's token scoped to an origin: of that origin
//     only): never another host's or origin's internal agent;
//   - reader tokens (only an operator makes them) list approved, public or
//     internal agents whose health is not gone;
//   - a caller holding groups (a token made with groups, or a person whose
//     identity provider sent them) also lists the approved agents of
//     visibility "groups" whose health is not gone and whose groups include
//     one of its own, matched exactly; nobody else lists them, reader tokens
//     without such a group included, except their host's publisher tokens
//     (as for internal agents) and admins;
//   - admins list every agent.
//
// Reading by id (the record, /card, versions, fetches, the agent page):
//   - admins read every agent;
//   - nobody else reads a removed agent (it answers not found, as if it had
//     never existed);
//   - an internal agent needs a reader token, or a publisher token of its
//     host: to anyone else it answers not found even when the id is known;
//   - an agent of visibility "groups" needs a caller holding one of its
//     groups, or a publisher token of its host: to anyone else, reader
//     tokens included, it answers not found;
//   - any other agent is readable by whoever holds its id, which is how an
//     anonymous publisher follows its submission.
//
// The change log (/changes) records with each change how far the agent
// reached before and after it (reach); a caller sees a change when its
// scope admitted the agent on either side, and a change that took the agent
// out of its scope only as "unlisted".

// audience is what the rule reads of an agent.
type audience struct {
	status     Status
	visibility Visibility
	health     Health
	host       string
	origin     string   // scheme://host[:port] of the card URL (cardurl.Origin)
	groups     []string // the agent's groups while its visibility is "groups"
}

func audienceOf(a Agent) audience {
	x := audience{a.Status, a.Visibility, a.Health, a.Host, cardurl.Origin(a.CardURL), nil}
	if a.Visibility == VisibilityGroups {
		x.groups = a.Groups
	}
	return x
}

func (r *agentRow) audience() audience {
	return audience{Status(r.Status), Visibility(r.Visibility), Health(r.Health), r.Host, cardurl.Origin(r.CardURL),
		decodeGroups(r.VisibleGroups)}
}

// listGroups are the groups whose holders list the agent: its groups while
// it is approved, not gone and of visibility "groups"; nil otherwise.
func (x audience) listGroups() []string {
	if x.visibility != VisibilityGroups || x.status != StatusApproved || x.health == HealthGone {
		return nil
	}
	return x.groups
}

// Index terms of the listing rule: an agent carries every term whose
// audience may list it, and a caller's scope is the set of terms any one of
// which admits an agent. One term per audience keeps a search's scope to a
// single posting list per term.
const (
	// ListTermAll is carried by every agent; admins' scope needs no term,
	// and a query "every agent" matches on it.
	ListTermAll = "admin"
	// ListTermAnonymous: approved, public, not gone.
	ListTermAnonymous = "anonymous"
	// ListTermTokens: approved, public or internal, not gone; reader
	// tokens list it.
	ListTermTokens = "reader"
	// listTermHostPrefix + host: any agent of that host not removed, listed
	// by the publisher tokens scoped to the host.
	listTermHostPrefix = "host:"
	// listTermOriginPrefix + origin: the same of one origin (scheme, host
	// and port), listed by the tokens of a claim that named a port or a
	// scheme (docs/claims.md, docs/threats.md K.104).
	listTermOriginPrefix = "origin:"
	// listTermGroupPrefix + group: an approved agent of visibility
	// "groups", not gone, that is for this group; listed by the callers
	// holding it.
	listTermGroupPrefix = "group:"
)

// ListTerms are the index terms of the listing rule for a: store them with
// the agent, and query them with ScopeOf. They change only when status,
// visibility, health or host change, and every such change is in the change
// log, so an index that follows it never holds stale terms.
func ListTerms(a Agent) []string { return audienceOf(a).terms() }

func (x audience) terms() []string { return x.reach().terms(x.host, x.origin, x.listGroups()) }

// reach is how far an agent is listed, the audiences nesting: everyone who
// lists an agent at one reach lists it at every greater reach too (the
// publisher tokens of its host list whatever tokens and anonymous callers
// list, and so on). The change log stores it for each side of a change
// (migration 00120), which is how the feed is filtered by the agent's
// state at the time of each change rather than now.
//
// Groups stand beside the reaches rather than among them: an agent of
// visibility "groups" is at reachHost (its host's publisher tokens list it,
// reader tokens do not), and while it is approved and not gone the holders
// of its groups list it too (audience.listGroups). The change log stores
// those groups for each side (migration 00190).
type reach int

// reachUnknown marks a change-log row written before migration 00120. The
// feed judges it by the agent's state now (listedSQL), which every caller
// it admits can list now, so nothing a caller could never list shows; an
// old change of an agent not listed now is hidden.
const reachUnknown reach = -1

const (
	// reachAdmins: removed, or (before a submission) not there at all.
	reachAdmins reach = iota
	// reachHost: not removed; listed by the publisher tokens of its host
	// (and by the holders of its groups, audience.listGroups).
	reachHost
	// reachTokens: approved, health not gone; listed by reader tokens.
	reachTokens
	// reachEveryone: approved, public, health not gone.
	reachEveryone
)

func (x audience) reach() reach {
	switch {
	case x.status == StatusRemoved:
		return reachAdmins
	case x.status != StatusApproved || x.health == HealthGone, x.visibility == VisibilityGroups:
		return reachHost
	case x.visibility != VisibilityPublic:
		return reachTokens
	}
	return reachEveryone
}

// terms are the index terms of an agent of host and origin at reach r,
// listed besides by the holders of groups.
func (r reach) terms(host, origin string, groups []string) []string {
	out := []string{ListTermAll}
	if r >= reachHost {
		for _, g := range groups {
			out = append(out, listTermGroupPrefix+g)
		}
	}
	if r >= reachHost && host != "" {
		out = append(out, listTermHostPrefix+host)
	}
	if r >= reachHost && origin != "" {
		out = append(out, listTermOriginPrefix+origin)
	}
	if r >= reachTokens {
		out = append(out, ListTermTokens)
	}
	if r >= reachEveryone {
		out = append(out, ListTermAnonymous)
	}
	return out
}

// Scope is what a caller may list, in index terms: every agent when All,
// otherwise the agents carrying at least one of Terms. The zero Scope is
// the anonymous caller's.
type Scope struct {
	All   bool
	Terms []string
}

// AnyOf is the terms an agent needs one of to be in the scope; nil when the
// scope is every agent.
func (s Scope) AnyOf() []string {
	switch {
	case s.All:
		return nil
	case len(s.Terms) == 0:
		return []string{ListTermAnonymous}
	}
	return s.Terms
}

// ScopeOf is the listing scope of p.
func ScopeOf(p Principal) Scope {
	switch p.Role {
	case RoleAdmin:
		return Scope{All: true}
	case RoleReader:
		return Scope{Terms: append([]string{ListTermTokens}, groupTerms(p.heldGroups())...)}
	case RolePublisher:
		// A publisher token is for publishing: it adds its own hosts to
		// the anonymous listing and nothing else (docs/security.md); a
		// claim's token scoped to one origin adds that origin only. Groups
		// it holds add their agents, as for any caller.
		terms := append([]string{ListTermAnonymous}, groupTerms(p.heldGroups())...)
		if p.Origin != "" {
			return Scope{Terms: append(terms, listTermOriginPrefix+p.Origin)}
		}
		for _, h := range p.Hosts {
			terms = append(terms, listTermHostPrefix+h)
		}
		return Scope{Terms: terms}
	}
	return Scope{Terms: []string{ListTermAnonymous}}
}

// Key is a stable fingerprint of the scope, for caches and page tokens:
// two callers with equal keys list exactly the same agents.
func (s Scope) Key() string {
	if s.All {
		return "*"
	}
	t := slices.Clone(s.AnyOf())
	slices.Sort(t)
	return strings.Join(slices.Compact(t), "\x00")
}

// Admits reports whether an agent carrying terms is in the scope.
func (s Scope) Admits(terms []string) bool {
	if s.All {
		return true
	}
	for _, t := range s.AnyOf() {
		if slices.Contains(terms, t) {
			return true
		}
	}
	return false
}

// CurationFilters reports whether p may filter a list on status, health or
// visibility, which would otherwise tell a caller about agents it may not
// list: admins only; anyone else gets ErrForbidden (403), never a silently
// narrower list.
func CurationFilters(p Principal) error {
	if p.isAdmin() {
		return nil
	}
	return ErrForbidden
}

// CanList reports whether p may list a.
func CanList(p Principal, a Agent) bool { return ScopeOf(p).Admits(ListTerms(a)) }

// CanRead reports whether p may read a by its id.
func CanRead(p Principal, a Agent) bool { return p.mayRead(audienceOf(a)) }

func (p Principal) mayRead(x audience) bool {
	switch {
	case p.isAdmin():
		return true
	case x.status == StatusRemoved:
		return false
	case x.visibility == VisibilityInternal:
		// The publisher tokens that list it (host or origin terms) read it.
		return p.Role == RoleReader || p.ownsAudience(x)
	case x.visibility == VisibilityGroups:
		return p.holdsAny(x.groups) || p.ownsAudience(x)
	}
	return true
}

// ownsAudience: p is a publisher token of the agent's host (and origin, for
// a claim's token), the tokens its host and origin terms name.
func (p Principal) ownsAudience(x audience) bool {
	return p.Role == RolePublisher && slices.Contains(p.Hosts, x.host) && (p.Origin == "" || p.Origin == x.origin)
}

// holdsAny reports whether p holds one of groups, compared exactly. An
// anonymous caller holds none, whatever Groups says.
func (p Principal) holdsAny(groups []string) bool {
	return slices.ContainsFunc(p.heldGroups(), func(g string) bool { return slices.Contains(groups, g) })
}

// heldGroups are the groups of p that can be an agent's: none for an
// anonymous caller, and a name no agent can have (NormalizeGroups: a comma,
// a line break, …) is dropped, so a name sent by an identity provider
// never reaches groupSQL's test with a newline in it.
func (p Principal) heldGroups() []string {
	if p.Role == "" {
		return nil
	}
	out := make([]string, 0, len(p.Groups))
	for _, g := range p.Groups {
		if badGroupName(g) == "" {
			out = append(out, g)
		}
	}
	return out
}

// groupTerms are the listing terms of the groups a caller holds.
func groupTerms(groups []string) []string {
	out := make([]string, 0, len(groups))
	for _, g := range groups {
		out = append(out, listTermGroupPrefix+g)
	}
	return out
}

// Bounds of an agent's groups (docs/security.md "Agents for groups"): at
// most maxAgentGroups names, each 1–maxGroupName bytes of UTF-8 printable
// characters, no comma (the CLI and the web forms separate names with
// commas), no leading or trailing space. Inner spaces are allowed: Okta and
// Keycloak group names carry them.
const (
	maxAgentGroups = 32
	maxGroupName   = 256
)

// NormalizeGroups checks group names against the bounds above and returns
// them sorted without repeats; field is the JSON pointer problems name.
func NormalizeGroups(field string, groups []string) ([]string, error) {
	if len(groups) > maxAgentGroups {
		return nil, invalidField(field, "too-many", fmt.Sprintf("at most %d groups", maxAgentGroups))
	}
	out := make([]string, 0, len(groups))
	for i, g := range groups {
		if msg := badGroupName(g); msg != "" {
			return nil, invalidField(fmt.Sprintf("%s/%d", field, i), "invalid-group", msg)
		}
		out = append(out, g)
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

func badGroupName(g string) string {
	switch {
	case g == "" || len(g) > maxGroupName:
		return fmt.Sprintf("a group name is 1 to %d bytes", maxGroupName)
	case !utf8.ValidString(g):
		return "a group name is UTF-8"
	case strings.TrimSpace(g) != g:
		return "a group name neither starts nor ends with a space"
	case strings.ContainsRune(g, ','):
		return "a group name holds no comma"
	}
	for _, r := range g {
		if !unicode.IsGraphic(r) || (unicode.IsSpace(r) && r != ' ') {
			return "a group name holds only printable characters"
		}
	}
	return ""
}

// encodeGroups is the stored form of groups (agents.visible_groups,
// changes.groups_*): each name between newlines, "" for none (migration
// 00190), so groupSQL's test is exact.
func encodeGroups(groups []string) string {
	if len(groups) == 0 {
		return ""
	}
	return "\n" + strings.Join(groups, "\n") + "\n"
}

func decodeGroups(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(strings.Trim(s, "\n"), "\n")
}

// groupSQL is "col (an encoded group list of the change log) holds one of
// groups": exact and case-sensitive in both dialects, where LIKE is not
// (SQLite's ignores ASCII case).
func groupSQL(col string, groups []string) (string, []any) {
	or := make([]string, len(groups))
	args := make([]any, len(groups))
	for i, g := range groups {
		or[i] = "replace(" + col + ", ?, '') <> " + col
		args[i] = "\n" + g + "\n"
	}
	return "(" + strings.Join(or, " OR ") + ")", args
}

// canRead applies CanRead to a stored row.
func (p Principal) canRead(r *agentRow) bool { return p.mayRead(r.audience()) }

// listedSQL is the listing rule over the agents table (alias t, "" for
// none): the condition and its arguments, or "" for admins.
func listedSQL(p Principal, t string) (string, []any) {
	if t != "" {
		t += "."
	}
	s := ScopeOf(p)
	if s.All {
		return "", nil
	}
	var or []string
	var args []any
	var hosts, groups []string
	for _, term := range s.AnyOf() {
		switch {
		case term == ListTermAnonymous:
			or = append(or, "("+t+"status = 'approved' AND "+t+"visibility = 'public' AND "+t+"health <> 'gone')")
		case term == ListTermTokens:
			or = append(or, "("+t+"status = 'approved' AND "+t+"visibility <> 'groups' AND "+t+"health <> 'gone')")
		case strings.HasPrefix(term, listTermGroupPrefix):
			groups = append(groups, strings.TrimPrefix(term, listTermGroupPrefix))
		case strings.HasPrefix(term, listTermHostPrefix):
			hosts = append(hosts, strings.TrimPrefix(term, listTermHostPrefix))
		case strings.HasPrefix(term, listTermOriginPrefix):
			cond, a := originSQL(t, strings.TrimPrefix(term, listTermOriginPrefix))
			or = append(or, "("+cond+" AND "+t+"status <> 'removed')")
			args = append(args, a...)
		}
	}
	if len(hosts) > 0 {
		or = append(or, "("+t+"host IN ? AND "+t+"status <> 'removed')")
		args = append(args, hosts)
	}
	if len(groups) > 0 {
		// agent_groups (SetVisibility keeps it equal to visible_groups):
		// one indexed lookup however many groups the caller holds.
		or = append(or, "("+t+"status = 'approved' AND "+t+"visibility = 'groups' AND "+t+"health <> 'gone' AND "+
			t+"id IN (SELECT g.agent_id FROM agent_groups g WHERE g.name IN ?))")
		args = append(args, groups)
	}
	return "(" + strings.Join(or, " OR ") + ")", args
}

// originSQL is "the card URL (column t+card_url) has this origin": it
// starts with the origin and a slash. Compared with substr rather than
// LIKE, so no character of the origin is a pattern.
func originSQL(t, origin string) (string, []any) {
	return "(substr(" + t + "card_url, 1, ?) = ? AND substr(" + t + "card_url, ?, 1) = '/')",
		[]any{len(origin), origin, len(origin) + 1}
}

// scope restricts a query on the agents table to what p may list.
func scope(db *gorm.DB, p Principal) *gorm.DB {
	cond, args := listedSQL(p, "")
	if cond == "" {
		return db
	}
	return db.Where(cond, args...)
}

// changeSQL is the listing rule over the change log (alias c, joined to
// the agents table as a for the host, which never changes): the condition
// that p's scope admitted the agent before or after the change, or "" for
// admins. 0 (reachAdmins) stands for "not there", so a submission has
// nothing before it; a row of reachUnknown is judged by the agent now.
// The groups that listed the agent on each side are in c.groups_before and
// c.groups_after ("" when none did).
func changeSQL(p Principal) (string, []any) {
	s := ScopeOf(p)
	if s.All {
		return "", nil
	}
	now, args := listedSQL(p, "a")
	or := []string{fmt.Sprintf("(c.reach_after = %d AND %s)", reachUnknown, now)}
	for i, col := range []string{"c.reach_before", "c.reach_after"} {
		var hosts, groups []string
		for _, term := range s.AnyOf() {
			switch {
			case strings.HasPrefix(term, listTermGroupPrefix):
				groups = append(groups, strings.TrimPrefix(term, listTermGroupPrefix))
			case term == ListTermAnonymous:
				or = append(or, fmt.Sprintf("%s >= %d", col, reachEveryone))
			case term == ListTermTokens:
				or = append(or, fmt.Sprintf("%s >= %d", col, reachTokens))
			case strings.HasPrefix(term, listTermHostPrefix):
				hosts = append(hosts, strings.TrimPrefix(term, listTermHostPrefix))
			case strings.HasPrefix(term, listTermOriginPrefix):
				cond, a := originSQL("a.", strings.TrimPrefix(term, listTermOriginPrefix))
				or = append(or, fmt.Sprintf("(%s >= %d AND %s)", col, reachHost, cond))
				args = append(args, a...)
			}
		}
		if len(hosts) > 0 {
			or = append(or, fmt.Sprintf("(%s >= %d AND a.host IN ?)", col, reachHost))
			args = append(args, hosts)
		}
		if len(groups) > 0 {
			cond, a := groupSQL([]string{"c.groups_before", "c.groups_after"}[i], groups)
			or = append(or, cond)
			args = append(args, a...)
		}
	}
	return "(" + strings.Join(or, " OR ") + ")", args
}

// feedKind is the kind p sees for a change of kind that left the agent at
// reach after, listed besides by the holders of groups (now is the agent's
// state now, for rows of reachUnknown):
// the kind itself while p's scope still admits the agent, and
// ChangeUnlisted once it does not. Whether the agent was removed,
// suspended, made internal or went gone is then not p's to know; that it
// left p's listing is all a mirror needs to drop it.
func feedKind(p Principal, kind string, after reach, groups []string, now audience) string {
	terms := after.terms(now.host, now.origin, groups)
	if after == reachUnknown {
		terms = now.terms()
	}
	if ScopeOf(p).Admits(terms) {
		return kind
	}
	return ChangeUnlisted
}
