package registry

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"slices"
	"strings"
	"time"

	"gorm.io/gorm"
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
	parts := []string{string(p.Role), strings.Join(p.Hosts, ","), strings.Join(strs(q.Status), ","), strings.Join(strs(q.Health), ","),
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
	if len(ids) == 0 {
		return []Agent{}, nil
	}
	if len(ids) > maxListedIDs {
		return nil, invalidField("/ids", "too-many", "at most 1000 ids at once")
	}
	db := s.store.read(ctx)
	var rows []agentRow
	if err := scope(db.Model(&agentRow{}), p).Where("id IN ? AND status <> 'removed'", ids).Find(&rows).Error; err != nil {
		return nil, translate(err)
	}
	agents, err := hydrate(db, rows)
	if err != nil {
		return nil, err
	}
	redactAgents(p, agents)
	byID := make(map[string]Agent, len(agents))
	for _, a := range agents {
		byID[a.ID] = a
	}
	out := make([]Agent, 0, len(agents))
	for _, id := range ids {
		if a, ok := byID[id]; ok {
			out = append(out, a)
			delete(byID, id) // a repeated id appears once
		}
	}
	return out, nil
}

// maxListedIDs bounds one Listed call (the search page size is ≤ 100).
const maxListedIDs = 1000
