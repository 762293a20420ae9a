package registry

import (
	"bufio"
	"context"
	"encoding/csv"
	"encoding/json"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/cardexhq/cardex/cardurl"
)

// Fetches returns an agent's crawl trace, newest first: admins, and the
// publisher token of the agent's host (docs/api.md). limit defaults to
// and is capped at the number of attempts kept.
func (s *Service) Fetches(ctx context.Context, p Principal, id string, limit int) ([]FetchAttempt, error) {
	if err := Authorize(p, NeedPublisher); err != nil {
		return nil, err
	}
	r, err := s.readable(ctx, p, id)
	if err != nil {
		return nil, err
	}
	if !p.isAdmin() && !p.owns(r.Host, r.CardURL) {
		return nil, ErrForbidden
	}
	if limit <= 0 || limit > s.cfg.KeepFetchAttempts {
		limit = s.cfg.KeepFetchAttempts
	}
	var rows []fetchRow
	if err := s.store.read(ctx).Where("agent_id = ?", id).Order("id DESC").Limit(limit).Find(&rows).Error; err != nil {
		return nil, translate(err)
	}
	out := make([]FetchAttempt, len(rows))
	for i, f := range rows {
		out[i] = FetchAttempt{At: f.At.UTC(), URL: f.URL, HTTPStatus: f.HTTPStatus, DurationMS: f.DurationMS,
			Duration: msDuration(f.DurationMS), Bytes: f.Bytes, ErrorClass: f.ErrorClass, Message: f.Message, Result: f.Result}
	}
	redactAttempts(p, out)
	return out, nil
}

// maxChangesLimit is the change log's page cap (docs/api.md).
const maxChangesLimit = 1000

func clampLimit(limit int) int {
	if limit <= 0 || limit > maxChangesLimit {
		return maxChangesLimit
	}
	return limit
}

// Changes returns change-log entries after seq `after`, oldest first, with
// the seq to ask after next (unchanged when there is nothing new).
//
// Filtered by what p may list (docs/api.md "Feeds"), judged by the agent's
// state on each side of the change, not by its state now: p sees a change
// when its scope admitted the agent before or after it, so the feed names
// only agents p could list at some point. A change that took the agent out
// of p's scope shows as ChangeUnlisted, which is enough for a mirror to
// drop it and says nothing p could not see (visibility.go changeSQL and
// feedKind).
func (s *Service) Changes(ctx context.Context, p Principal, after int64, limit int) ([]Change, int64, error) {
	limit = clampLimit(limit)
	db := s.store.read(ctx).Table("changes c").Where("c.seq > ?", after)
	if cond, args := changeSQL(p); cond != "" {
		db = db.Joins("JOIN agents a ON a.id = c.agent_id").Where(cond, args...).
			Select("c.seq, c.agent_id, c.kind, c.at, c.reach_after, c.groups_after, a.status, a.visibility, a.health, a.host, a.card_url, a.visible_groups")
	} else {
		db = db.Select("c.seq, c.agent_id, c.kind, c.at, c.reach_after")
	}
	var rows []struct {
		Seq                              int64
		AgentID                          string
		Kind                             string
		At                               time.Time
		ReachAfter                       int
		GroupsAfter                      string
		VisibleGroups                    string
		Status, Visibility, Health, Host string
		CardURL                          string
	}
	if err := db.Order("c.seq ASC").Limit(limit).Scan(&rows).Error; err != nil {
		return nil, after, translate(err)
	}
	out := make([]Change, len(rows))
	next := after
	for i, r := range rows {
		now := audience{Status(r.Status), Visibility(r.Visibility), Health(r.Health), r.Host, cardurl.Origin(r.CardURL),
			decodeGroups(r.VisibleGroups)}
		out[i] = Change{Seq: r.Seq, AgentID: r.AgentID, Kind: feedKind(p, r.Kind, reach(r.ReachAfter), decodeGroups(r.GroupsAfter), now), At: r.At.UTC()}
		next = r.Seq
	}
	return out, next, nil
}

// LatestChange is the newest change-log seq (0 when empty), for followers
// that start from "now" and for readiness checks of the index.
func (s *Store) LatestChange(ctx context.Context) (int64, error) {
	var seq int64
	err := s.read(ctx).Raw("SELECT COALESCE(MAX(seq), 0) FROM changes").Scan(&seq).Error
	return seq, translate(err)
}

// Audit returns audit entries after seq `after`, oldest first (admins only).
func (s *Service) Audit(ctx context.Context, p Principal, after int64, limit int) ([]AuditEntry, int64, error) {
	page, err := s.AuditLog(ctx, p, AuditQuery{After: after, Limit: limit})
	if err != nil {
		return nil, after, err
	}
	return page.Entries, page.Next, nil
}

// AuditActions are the actions the audit log records.
var AuditActions = []string{"submit", "approve", "reject", "suspend", "restore", "remove",
	"set-visibility", "pin-keys", "unpin-keys", "crawl", "token-create", "token-revoke", ActionAutoApprove,
	ActionCatalogPause, ActionCatalogResume, ActionCatalogRemove}

// AuditQuery selects audit entries. Oldest first after After (a feed to
// follow), or with Newest, newest first below Before (0: from the newest),
// the order people read a log in. AgentID, Actor (a token id or name, or
// a person's identity-provider subject, email or name) and Actions narrow
// it; empty means any.
type AuditQuery struct {
	After   int64
	Newest  bool
	Before  int64
	AgentID string
	Actor   string
	Actions []string
	// Since and Until bound the entries' time: at or after Since, before
	// Until; the zero time leaves that end open.
	Since, Until time.Time
	Limit        int // default and cap 1000
}

// AuditPage is one page of the audit log. Next is the cursor of the next
// page: the After to ask with (unchanged when nothing is new) oldest first,
// or the Before to ask with newest first (0 on the last page).
type AuditPage struct {
	Entries []AuditEntry
	Next    int64
}

// AuditLog returns one page of the audit log (admins only).
func (s *Service) AuditLog(ctx context.Context, p Principal, q AuditQuery) (*AuditPage, error) {
	if err := requireAdmin(p); err != nil {
		return nil, err
	}
	limit := clampLimit(q.Limit)
	db := s.store.read(ctx).Model(&auditRow{})
	if q.AgentID != "" {
		db = db.Where("agent_id = ?", q.AgentID)
	}
	if q.Actor != "" {
		db = db.Where("(actor_token_id = ? OR actor_name = ? OR actor_subject = ? OR actor_display = ?)", q.Actor, q.Actor, q.Actor, q.Actor)
	}
	if len(q.Actions) > 0 {
		db = db.Where("action IN ?", q.Actions)
	}
	if !q.Since.IsZero() {
		db = db.Where("at >= ?", q.Since.UTC())
	}
	if !q.Until.IsZero() {
		db = db.Where("at < ?", q.Until.UTC())
	}
	if q.Newest {
		if q.Before > 0 {
			db = db.Where("seq < ?", q.Before)
		}
		db = db.Order("seq DESC").Limit(limit + 1)
	} else {
		db = db.Where("seq > ?", q.After).Order("seq ASC").Limit(limit)
	}
	var rows []auditRow
	if err := db.Find(&rows).Error; err != nil {
		return nil, translate(err)
	}
	page := &AuditPage{Next: q.After}
	if q.Newest {
		page.Next = 0
		if len(rows) > limit {
			rows = rows[:limit]
			page.Next = rows[limit-1].Seq
		}
	}
	page.Entries = make([]AuditEntry, len(rows))
	for i, r := range rows {
		e := AuditEntry{Seq: r.Seq, At: r.At.UTC(), ActorID: r.ActorTokenID, ActorName: r.ActorName,
			ActorSubject: r.ActorSubject, ActorDisplayName: r.ActorDisplay, Action: r.Action, AgentID: r.AgentID, Reason: r.Reason}
		if r.Detail != "" && r.Detail != "{}" {
			_ = json.Unmarshal([]byte(r.Detail), &e.Detail)
		}
		page.Entries[i] = e
		if !q.Newest {
			page.Next = r.Seq
		}
	}
	return page, nil
}

// Audit export formats (docs/api.md "Audit log").
const (
	AuditJSONLines = "jsonl"
	AuditCSV       = "csv"
)

// auditCSVHeader names the CSV export's columns; detail is the entry's
// detail object as JSON.
var auditCSVHeader = []string{"seq", "at", "actorId", "actorName", "action", "agentId", "reason", "detail", "actorSubject", "actorDisplayName"}

// ExportAudit writes every entry q selects, oldest first, to w in format
// (AuditJSONLines: one AuditEntry JSON object a line; AuditCSV: a header
// row, then one row an entry), reading the log a page at a time so an
// export of any size holds one page in memory. q's paging fields are
// ignored. start, when not nil, is called once the first page has been
// read and before anything is written (an HTTP handler sends its status
// there): an error returned before start was called wrote nothing. It
// returns how many entries it wrote.
func (s *Service) ExportAudit(ctx context.Context, p Principal, q AuditQuery, format string, w io.Writer, start func()) (int, error) {
	if err := requireAdmin(p); err != nil {
		return 0, err
	}
	if format != AuditJSONLines && format != AuditCSV {
		return 0, invalidField("/format", "enum", "format must be jsonl or csv")
	}
	q.After, q.Newest, q.Before, q.Limit = 0, false, 0, maxChangesLimit
	page, err := s.AuditLog(ctx, p, q)
	if err != nil {
		return 0, err
	}
	if start != nil {
		start()
	}
	bw := bufio.NewWriter(w)
	var cw *csv.Writer
	if format == AuditCSV {
		cw = csv.NewWriter(bw)
		if err := cw.Write(auditCSVHeader); err != nil {
			return 0, err
		}
	}
	n := 0
	for {
		for _, e := range page.Entries {
			if err := writeAuditEntry(bw, cw, e); err != nil {
				return n, err
			}
			n++
		}
		if len(page.Entries) < q.Limit {
			break
		}
		q.After = page.Next
		if page, err = s.AuditLog(ctx, p, q); err != nil {
			return n, err
		}
	}
	if cw != nil {
		cw.Flush()
		if err := cw.Error(); err != nil {
			return n, err
		}
	}
	return n, bw.Flush()
}

func writeAuditEntry(w *bufio.Writer, cw *csv.Writer, e AuditEntry) error {
	if cw == nil {
		b, err := json.Marshal(e)
		if err != nil {
			return err
		}
		b = append(b, '\n')
		_, err = w.Write(b)
		return err
	}
	detail := ""
	if len(e.Detail) > 0 {
		b, err := json.Marshal(e.Detail)
		if err != nil {
			return err
		}
		detail = string(b)
	}
	return cw.Write([]string{strconv.FormatInt(e.Seq, 10), e.At.UTC().Format(time.RFC3339Nano), csvCell(e.ActorID),
		csvCell(e.ActorName), csvCell(e.Action), csvCell(e.AgentID), csvCell(e.Reason), csvCell(detail),
		csvCell(e.ActorSubject), csvCell(e.ActorDisplayName)})
}

// csvCell keeps a spreadsheet from reading a cell as a formula (a reason,
// or a name an OIDC provider gave, starting with =, +, -, @, tab or CR):
// such a cell is written with a leading apostrophe (docs/threats.md I.81).
func csvCell(s string) string {
	if s != "" && strings.ContainsRune("=+-@\t\r", rune(s[0])) {
		return "'" + s
	}
	return s
}
