package registry

import (
	"cmp"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"gorm.io/gorm"

	"github.com/cardexhq/cardex/agentcard"
)

// Page sizes (docs/api.md, docs/threats.md I.82).
const (
	defaultPageSize = 20
	maxPageSize     = 100
)

// pageToken is the keyset cursor: the sort key and id of the last agent of
// the previous page, bound to the sort and filters it was issued for.
type pageToken struct {
	Sort   string `json:"s"`
	Key    string `json:"k"`
	ID     string `json:"i"`
	Filter string `json:"f"`
	Check  string `json:"c"`
}

func (t pageToken) checksum() string {
	h := sha256.Sum256([]byte("cardex-page\x00" + t.Sort + "\x00" + t.Key + "\x00" + t.ID + "\x00" + t.Filter))
	return base64.RawURLEncoding.EncodeToString(h[:8])
}

func (t pageToken) encode() string {
	t.Check = t.checksum()
	b, _ := json.Marshal(t)
	return base64.RawURLEncoding.EncodeToString(b)
}

func decodePageToken(s, sort, filter string) (*pageToken, error) {
	if s == "" {
		return nil, nil
	}
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil || len(b) > 2048 {
		return nil, ErrInvalidPageToken
	}
	var t pageToken
	if json.Unmarshal(b, &t) != nil || t.Check != t.checksum() || t.Sort != sort || t.Filter != filter || t.ID == "" {
		return nil, ErrInvalidPageToken
	}
	if sort == "updated" {
		if _, err := time.Parse(time.RFC3339Nano, t.Key); err != nil {
			return nil, ErrInvalidPageToken
		}
	}
	return &t, nil
}

func validateQuery(p Principal, q *ListQuery) error {
	if len(q.Status) > 0 || len(q.Health) > 0 || len(q.Visibility) > 0 {
		if err := CurationFilters(p); err != nil {
			return err
		}
	}
	check := func(ptr string, vals []string, allowed ...string) error {
		for _, v := range vals {
			if !slices.Contains(allowed, v) {
				return invalidField(ptr, "enum", "unknown value "+v)
			}
		}
		return nil
	}
	for _, err := range []error{
		check("/status", strs(q.Status), "pending", "approved", "rejected", "suspended", "removed"),
		check("/health", strs(q.Health), "unknown", "ok", "failing", "gone"),
		check("/trust", strs(q.Trust), "unknown", "unsigned", "verified", "invalid", "untrusted", "error"),
		check("/visibility", strs(q.Visibility), "public", "internal"),
	} {
		if err != nil {
			return err
		}
	}
	switch q.Sort {
	case "":
		q.Sort = "updated"
	case "updated", "name":
	default:
		return invalidField("/sort", "enum", `sort must be "updated" or "name"`)
	}
	switch {
	case q.PageSize <= 0:
		q.PageSize = defaultPageSize
	case q.PageSize > maxPageSize:
		q.PageSize = maxPageSize
	}
	return nil
}

func strs[T ~string](v []T) []string {
	out := make([]string, len(v))
	for i, x := range v {
		out[i] = string(x)
	}
	return out
}

func filterKey(p Principal, q ListQuery) string {
	parts := []string{string(p.Role), strings.Join(p.Hosts, ","), ScopeOf(p).Key(), strings.Join(strs(q.Status), ","), strings.Join(strs(q.Health), ","),
		strings.Join(strs(q.Trust), ","), strings.Join(strs(q.Visibility), ","), needsReviewKey(q.NeedsReview), strings.Join(q.Hosts, ",")}
	h := sha256.Sum256([]byte(strings.Join(parts, "|")))
	return base64.RawURLEncoding.EncodeToString(h[:9])
}

// List returns one keyset page of the agents p may list (docs/threats.md
// I.82: capped page size, cursor pagination). Sort "updated" is newest
// first; "name" is by card name, agents never fetched (no name) first.
func (s *Service) List(ctx context.Context, p Principal, q ListQuery) (*AgentPage, error) {
	if err := validateQuery(p, &q); err != nil {
		return nil, err
	}
	fk := filterKey(p, q)
	tok, err := decodePageToken(q.PageToken, q.Sort, fk)
	if err != nil {
		return nil, err
	}
	filtered := func(db *gorm.DB) *gorm.DB {
		db = scope(db.Model(&agentRow{}), p)
		for col, vals := range map[string][]string{"status": strs(q.Status), "health": strs(q.Health), "trust": strs(q.Trust), "visibility": strs(q.Visibility), "host": q.Hosts} {
			if len(vals) > 0 {
				db = db.Where(col+" IN ?", vals)
			}
		}
		if q.NeedsReview != nil {
			db = db.Where("needs_review = ?", *q.NeedsReview)
		}
		return db
	}
	var total int64
	if err := filtered(s.store.read(ctx)).Count(&total).Error; err != nil {
		return nil, translate(err)
	}
	db := filtered(s.store.read(ctx))
	if q.Sort == "name" {
		if tok != nil {
			db = db.Where("(name > ? OR (name = ? AND id > ?))", tok.Key, tok.Key, tok.ID)
		}
		db = db.Order("name ASC, id ASC")
	} else {
		if tok != nil {
			at, _ := time.Parse(time.RFC3339Nano, tok.Key)
			at = utc(at)
			db = db.Where("(updated_at < ? OR (updated_at = ? AND id < ?))", at, at, tok.ID)
		}
		db = db.Order("updated_at DESC, id DESC")
	}
	var rows []agentRow
	if err := db.Limit(q.PageSize + 1).Find(&rows).Error; err != nil {
		return nil, translate(err)
	}
	page := &AgentPage{TotalSize: int(total)}
	if len(rows) > q.PageSize {
		rows = rows[:q.PageSize]
		last := rows[len(rows)-1]
		t := pageToken{Sort: q.Sort, ID: last.ID, Filter: fk, Key: last.Name}
		if q.Sort == "updated" {
			t.Key = last.UpdatedAt.UTC().Format(time.RFC3339Nano)
		}
		page.NextPageToken = t.encode()
	}
	if page.Agents, err = hydrate(s.store.read(ctx), rows); err != nil {
		return nil, err
	}
	redactAgents(p, page.Agents)
	return page, nil
}

func needsReviewKey(v *bool) string {
	switch {
	case v == nil:
		return ""
	case *v:
		return "review"
	}
	return "no-review"
}

// Listed returns the records of the agents with these ids that p may list
// (see visibility.go), in the order of ids, reading them in one query; ids
// that do not exist or that p may not list are left out, and so are removed
// agents, for admins too: Listed hydrates search hits, and the index holds
// no removed agent, so a removed one is a hit the index has not dropped yet
// (admins list removed agents with List and status removed). Checking SQL
// means an agent hidden or removed there never appears even while the index
// lags (docs/threats.md G.72).
func (s *Service) Listed(ctx context.Context, p Principal, ids []string) ([]Agent, error) {
	return s.listed(ctx, p, ids, listCards)
}

// ListedViews is Listed for callers that render records as JSON (the API's
// search pages): an agent whose current version has a stored view of this
// revision (views.go) comes back with CardView set and a nil Card and nil
// Problems, its card and problems neither read from the version nor
// decoded (CardView holds them as JSON); every other field, and the card
// and problems of an agent without such a view, is read as Listed reads
// it.
func (s *Service) ListedViews(ctx context.Context, p Principal, ids []string) ([]Agent, error) {
	return s.listed(ctx, p, ids, listViews)
}

// ListedSummaries is Listed for result lists (docs/api.md "Lists and
// search"): every agent with a card comes back with a nil Card, nil
// Problems and a CardView holding only the card's Summary, Shape and
// ProtocolVersions, read from the stored view without reading the card
// or its view (docs/threats.md K.96: a page of 100 large cards reads 100
// small summaries). An agent whose version has no view of this revision
// yet has its summary made from its card.
func (s *Service) ListedSummaries(ctx context.Context, p Principal, ids []string) ([]Agent, error) {
	return s.listed(ctx, p, ids, listSummaries)
}

// What listed reads of each agent's current version.
type listMode int

const (
	listCards     listMode = iota // the card, decoded
	listViews                     // the stored view (CardView), else the card
	listSummaries                 // the stored summary (CardView.Summary), else one made from the card
)

func (s *Service) listed(ctx context.Context, p Principal, ids []string, mode listMode) ([]Agent, error) {
	if len(ids) == 0 {
		return []Agent{}, nil
	}
	if len(ids) > maxListedIDs {
		return nil, invalidField("/ids", "too-many", "at most 1000 ids at once")
	}
	// One statement reads the rows (and, views, their stored views) by
	// primary key. The listing rule is applied to the rows in Go (its
	// spelling over a row, visibility.go): with the rule in SQL, SQLite
	// prefers the status index for twenty ids and walks every approved
	// agent.
	rows, err := s.listedRows(ctx, p, ids, mode)
	if err != nil {
		return nil, err
	}
	// The current versions of the rows without a view, in a second
	// statement.
	var need []any // agent id, version seq, …
	for i := range rows {
		r := &rows[i]
		if r.View == nil && r.Row.CurrentVersionSeq > 0 {
			need = append(need, r.Row.ID, r.Row.CurrentVersionSeq)
		}
	}
	versions, err := s.listedVersions(ctx, need)
	if err != nil {
		return nil, err
	}
	agents := make([]Agent, len(rows))
	for i := range rows {
		r := &rows[i]
		if w := r.View; w != nil {
			// The problems stay JSON (CardView.Problems).
			agents[i] = toAgent(&r.Row, &versionRow{AgentID: w.AgentID, Seq: w.Seq, Verdict: w.Verdict, Problems: "null"})
			agents[i].Problems = nil
			agents[i].CardView = cardView(w)
		} else {
			agents[i] = toAgent(&r.Row, versions[r.Row.ID])
			if c := agents[i].Card; mode == listSummaries && c != nil {
				sum, err := c.SummaryJSON()
				if err != nil {
					return nil, err
				}
				agents[i].CardView = &CardView{Summary: sum, Shape: c.Shape, ProtocolVersions: c.ProtocolVersions}
				agents[i].Card, agents[i].Problems = nil, nil
			}
		}
	}
	redactAgents(p, agents)
	// In the order of ids (a repeated id's first place), sorted in place:
	// an Agent is 440 bytes, and a second slice or a map of them cost a
	// search page more allocations than the rest of the listing.
	first := make(map[string]int, len(ids))
	for i, id := range ids {
		if _, ok := first[id]; !ok {
			first[id] = i
		}
	}
	slices.SortFunc(agents, func(a, b Agent) int { return cmp.Compare(first[a.ID], first[b.ID]) })
	return agents, nil
}

// listedRow is an agents row and, when views were asked for, its current
// version's stored view (nil without one).
type listedRow struct {
	Row  agentRow
	View *viewRow
}

// listedRows reads, in one statement by primary key, what a record needs
// (toAgent and livenessOf) of the agents with these ids, removed ones left
// out, and keeps those p may list. The columns are scanned by hand:
// Listed runs for every search page.
func (s *Service) listedRows(ctx context.Context, p Principal, ids []string, mode listMode) ([]listedRow, error) {
	args := make([]any, len(ids))
	for i, id := range ids {
		args[i] = id
	}
	rs, err := s.store.listedStmt(ctx, listedKey{mode: mode, n: len(ids)}).QueryContext(ctx, args...)
	if err != nil {
		return nil, translate(err)
	}
	defer rs.Close()
	sc := ScopeOf(p)
	rows := make([]listedRow, 0, len(ids))
	// One set of scan targets for every row: Scan overwrites each of them
	// (a NULL sets a pointer or slice to nil), and the row is copied out.
	var r listedRow
	a := &r.Row
	dst := []any{&a.ID, &a.CardURL, &a.FetchedURL, &a.Host, &a.Status, &a.Visibility, &a.Health, &a.Trust,
		&a.NeedsReview, &a.CreatedAt, &a.UpdatedAt, &a.LastFetchedAt, &a.LastChangedAt, &a.LastSuccessAt,
		&a.FailingSince, &a.ConsecutiveFailures, &a.CurrentVersionSeq, &a.NextFetchAt, &a.LastErrorClass,
		&a.LastErrorStatus, &a.LastErrorMessage, &a.LastErrorAt, &a.CatalogURL, &a.Liveness, &a.LivenessSince,
		&a.ProbeDisabled, &a.CatalogCard, &a.CatalogMissing, &a.CatalogQueries, &a.AutoApproveHeld, &a.VisibleGroups,
		&a.CatalogSource, &a.CatalogIdentifier}
	var rendered, summary []byte
	var shape, pvs, verdict, problems *string
	switch mode {
	case listViews:
		dst = append(dst, &rendered, &shape, &pvs, &verdict, &problems)
	case listSummaries:
		dst = append(dst, &summary, &shape, &pvs, &verdict)
	}
	for rs.Next() {
		r.View = nil
		if err := rs.Scan(dst...); err != nil {
			return nil, translate(err)
		}
		switch {
		case mode == listViews && rendered != nil && shape != nil && pvs != nil && verdict != nil && problems != nil:
			r.View = &viewRow{AgentID: a.ID, Seq: a.CurrentVersionSeq, Rev: agentcard.ViewRevision, Rendered: rendered,
				Shape: *shape, ProtocolVersions: *pvs, Verdict: *verdict, Problems: *problems}
		case mode == listSummaries && summary != nil && shape != nil && pvs != nil && verdict != nil:
			r.View = &viewRow{AgentID: a.ID, Seq: a.CurrentVersionSeq, Rev: agentcard.ViewRevision,
				Summary: summary, Shape: *shape, ProtocolVersions: *pvs, Verdict: *verdict, Problems: "[]"}
		}
		if sc.Admits(a.audience().terms()) {
			rows = append(rows, r)
		}
	}
	if err := rs.Err(); err != nil {
		return nil, translate(err)
	}
	return rows, nil
}

// listedVersions reads what a record needs of the versions in need (agent
// id, seq, …): verdict, problems and card, by agent id, in one statement.
func (s *Service) listedVersions(ctx context.Context, need []any) (map[string]*versionRow, error) {
	out := make(map[string]*versionRow, len(need)/2)
	if len(need) == 0 {
		return out, nil
	}
	rs, err := s.store.listedStmt(ctx, listedKey{versions: true, n: len(need) / 2}).QueryContext(ctx, need...)
	if err != nil {
		return nil, translate(err)
	}
	defer rs.Close()
	for rs.Next() {
		v := &versionRow{}
		if err := rs.Scan(&v.AgentID, &v.Seq, &v.Verdict, &v.Problems, &v.Card); err != nil {
			return nil, translate(err)
		}
		out[v.AgentID] = v
	}
	if err := rs.Err(); err != nil {
		return nil, translate(err)
	}
	return out, nil
}

// listedKey names one of Listed's statements: the rows of n ids (with
// their views or not), or the versions of n (id, seq) pairs.
type listedKey struct {
	versions bool
	mode     listMode // rows with their stored views or summaries
	n        int
}

// listedSQLText is the text of k's statement in the store's placeholder
// syntax; listedRows' and listedVersions' scans follow its column order.
func (s *Store) listedSQLText(k listedKey) string {
	var b strings.Builder
	if k.versions {
		b.WriteString("SELECT agent_id, seq, verdict, problems, card FROM card_versions WHERE (agent_id, seq) IN (")
	} else {
		b.WriteString("SELECT a.id, a.card_url, a.fetched_url, a.host, a.status, a.visibility, a.health, a.trust, " +
			"a.needs_review, a.created_at, a.updated_at, a.last_fetched_at, a.last_changed_at, a.last_success_at, " +
			"a.failing_since, a.consecutive_failures, a.current_version_seq, a.next_fetch_at, a.last_error_class, " +
			"a.last_error_status, a.last_error_message, a.last_error_at, a.catalog_url, a.liveness, a.liveness_since, " +
			"a.probe_disabled, a.catalog_card, a.catalog_missing, a.catalog_queries, a.auto_approve_held, a.visible_groups, " +
			"a.catalog_source, a.catalog_identifier")
		switch k.mode {
		case listViews:
			fmt.Fprintf(&b, ", w.rendered, w.shape, w.protocol_versions, w.verdict, w.problems FROM agents a "+
				"LEFT JOIN card_views w ON w.agent_id = a.id AND w.seq = a.current_version_seq AND w.rev = %d ", agentcard.ViewRevision)
		case listSummaries:
			fmt.Fprintf(&b, ", w.summary, w.shape, w.protocol_versions, w.verdict FROM agents a "+
				"LEFT JOIN card_views w ON w.agent_id = a.id AND w.seq = a.current_version_seq AND w.rev = %d ", agentcard.ViewRevision)
		default:
			b.WriteString(" FROM agents a ")
		}
		b.WriteString("WHERE a.status <> 'removed' AND a.id IN (")
	}
	arg := 0
	param := func() {
		arg++
		if s.dialect == DialectPostgres {
			fmt.Fprintf(&b, "$%d", arg)
		} else {
			b.WriteByte('?')
		}
	}
	for i := range k.n {
		if i > 0 {
			b.WriteByte(',')
		}
		if k.versions {
			b.WriteByte('(')
			param()
			b.WriteByte(',')
			param()
			b.WriteByte(')')
		} else {
			param()
		}
	}
	b.WriteByte(')')
	return b.String()
}

// maxPreparedListed is the largest count whose statement is kept prepared
// (search pages hold at most 100 agents).
const maxPreparedListed = 100

// listedStmt returns k's statement: prepared once per kind and count up to
// maxPreparedListed and kept until the store closes, so a search page is
// neither parsed nor planned again.
func (s *Store) listedStmt(ctx context.Context, k listedKey) interface {
	QueryContext(ctx context.Context, args ...any) (*sql.Rows, error)
} {
	if k.n > maxPreparedListed {
		return adhocStmt{s.rsql, s.listedSQLText(k)}
	}
	if st, ok := s.listed.Load(k); ok {
		return st.(*sql.Stmt)
	}
	st, err := s.rsql.PrepareContext(ctx, s.listedSQLText(k))
	if err != nil {
		// Unprepared: QueryContext reports the error again.
		return adhocStmt{s.rsql, s.listedSQLText(k)}
	}
	if prev, loaded := s.listed.LoadOrStore(k, st); loaded {
		_ = st.Close()
		return prev.(*sql.Stmt)
	}
	return st
}

// adhocStmt runs a statement without preparing it first.
type adhocStmt struct {
	db   *sql.DB
	text string
}

func (a adhocStmt) QueryContext(ctx context.Context, args ...any) (*sql.Rows, error) {
	return a.db.QueryContext(ctx, a.text, args...)
}

// maxListedIDs bounds one Listed call (the search page size is ≤ 100).
const maxListedIDs = 1000
