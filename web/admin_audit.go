package web

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/cardexhq/cardex/registry"
)

const auditPageSize = 50

type auditView struct {
	Entries              []auditRow
	Agent, Actor, Action string
	From, To             string // the date range, YYYY-MM-DD (UTC), To inclusive
	AgentName            string // the agent filtered on, by name
	ExportJSONL          string // the export of what the filters select
	ExportCSV            string
	Actions              []string
	Next, First          string
	Filtered             bool
}

type auditRow struct {
	registry.AuditEntry
	AgentName  string
	DetailText string
	AgentURL   string // the log filtered on this entry's agent
	ActorURL   string // the log filtered on this entry's actor
}

// auditPage is GET /admin/audit?agent=&actor=&action=&from=&to=&before=:
// the audit log newest first, in pages of 50, filterable by agent, actor
// (token id or name), action and a range of days (UTC, both inclusive).
func (u *ui) auditPage(w http.ResponseWriter, r *http.Request) error {
	v, q, err := auditFilter(r)
	if err != nil {
		return err
	}
	q.Newest, q.Limit = true, auditPageSize
	if s := r.URL.Query().Get("before"); s != "" {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil || n < 1 {
			return errBadRequest
		}
		q.Before = n
	}
	page, err := u.svc.AuditLog(r.Context(), principal(r), q)
	if err != nil {
		return err
	}
	kept := v.kept()
	v.Filtered = len(kept) > 0
	for _, f := range []struct {
		format string
		dst    *string
	}{{registry.AuditJSONLines, &v.ExportJSONL}, {registry.AuditCSV, &v.ExportCSV}} {
		ex := cloneValues(kept)
		ex.Set("format", f.format)
		*f.dst = "/admin/audit/export?" + ex.Encode()
	}
	names, err := u.agentNames(r, page.Entries, v.Agent)
	if err != nil {
		return err
	}
	v.AgentName = names[v.Agent]
	for _, e := range page.Entries {
		row := auditRow{AuditEntry: e, AgentName: names[e.AgentID], DetailText: auditDetail(e)}
		if e.AgentID != "" {
			row.AgentURL = "/admin/audit?" + url.Values{"agent": {e.AgentID}}.Encode()
		}
		// A person signed in with the identity provider is filtered on by
		// the stable subject, a token by its id.
		if who := or(e.ActorSubject, or(e.ActorID, e.ActorName)); who != "" {
			row.ActorURL = "/admin/audit?" + url.Values{"actor": {who}}.Encode()
		}
		v.Entries = append(v.Entries, row)
	}
	if page.Next > 0 {
		next := cloneValues(kept)
		next.Set("before", strconv.FormatInt(page.Next, 10))
		v.Next = "/admin/audit?" + next.Encode()
	}
	if q.Before > 0 {
		v.First = "/admin/audit"
		if len(kept) > 0 {
			v.First += "?" + kept.Encode()
		}
	}
	u.render(w, r, http.StatusOK, "admin_audit", "Audit log", v)
	return nil
}

// agentNames maps the agent ids of the entries to a name a person knows
// them by: the card's name, else the host.
func (u *ui) agentNames(r *http.Request, es []registry.AuditEntry, extra string) (map[string]string, error) {
	var ids []string
	for _, e := range es {
		if e.AgentID != "" && !slices.Contains(ids, e.AgentID) {
			ids = append(ids, e.AgentID)
		}
	}
	if extra != "" && !slices.Contains(ids, extra) {
		ids = append(ids, extra)
	}
	agents, err := u.svc.Listed(r.Context(), principal(r), ids)
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, a := range agents {
		out[a.ID] = a.Host
		if a.Card != nil && a.Card.Name != "" {
			out[a.ID] = visible(a.Card.Name)
		}
	}
	return out, nil
}

// auditDetail says what an entry's detail records in words.
func auditDetail(e registry.AuditEntry) string {
	d := e.Detail
	str := func(k string) string {
		if v, ok := d[k]; ok && v != nil {
			return fmt.Sprint(v)
		}
		return ""
	}
	var parts []string
	switch e.Action {
	case "approve", "reject", "suspend", "restore", "remove":
		if from, to := str("from"), str("to"); from != "" && to != "" {
			parts = append(parts, from+" → "+to)
		}
		if seq := str("versionSeq"); seq != "" {
			parts = append(parts, "version "+seq)
		}
	case "submit":
		if u := str("cardUrl"); u != "" {
			parts = append(parts, "card URL "+u)
		}
		if vis := str("visibility"); vis != "" {
			parts = append(parts, vis)
		}
	case "set-visibility":
		p := "visibility " + str("visibility")
		if gs, ok := d["groups"].([]any); ok && len(gs) > 0 {
			var groups []string
			for _, g := range gs {
				groups = append(groups, fmt.Sprint(g))
			}
			p += ": " + strings.Join(groups, ", ")
		}
		parts = append(parts, p)
	case "pin-keys":
		parts = append(parts, plural(int(number(d["keys"])), "key")+" pinned")
	case "token-create":
		p := "token “" + str("name") + "”, role " + str("role")
		if hs, ok := d["hosts"].([]any); ok && len(hs) > 0 {
			var hosts []string
			for _, h := range hs {
				hosts = append(hosts, fmt.Sprint(h))
			}
			p += ", hosts " + strings.Join(hosts, ", ")
		}
		parts = append(parts, p)
	case "token-revoke":
		parts = append(parts, "token “"+str("name")+"”")
	case registry.ActionCatalogPause, registry.ActionCatalogResume, registry.ActionCatalogRemove:
		parts = append(parts, "catalog "+str("catalog"), "was "+str("from"))
		if e.Action == registry.ActionCatalogRemove {
			parts = append(parts, plural(int(number(d["agentsKept"])), "agent")+" kept")
		}
	default:
		keys := sortedKeys(d)
		for _, k := range keys {
			parts = append(parts, k+" "+str(k))
		}
	}
	return visible(strings.Join(parts, "; "))
}

func number(v any) float64 {
	if f, ok := v.(float64); ok {
		return f
	}
	return 0
}

// auditFilter reads the audit page's filters, shared by the page and its
// export.
func auditFilter(r *http.Request) (auditView, registry.AuditQuery, error) {
	in := r.URL.Query()
	v := auditView{Agent: in.Get("agent"), Actor: in.Get("actor"), Action: in.Get("action"), From: in.Get("from"), To: in.Get("to"),
		Actions: registry.AuditActions}
	if len(v.Agent) > 64 || len(v.Actor) > 200 || (v.Action != "" && !slices.Contains(registry.AuditActions, v.Action)) {
		return v, registry.AuditQuery{}, errBadRequest
	}
	q := registry.AuditQuery{AgentID: v.Agent, Actor: v.Actor}
	if v.Action != "" {
		q.Actions = []string{v.Action}
	}
	for _, d := range []struct {
		text string
		dst  *time.Time
		days int
	}{{v.From, &q.Since, 0}, {v.To, &q.Until, 1}} {
		if d.text == "" {
			continue
		}
		day, err := time.Parse(time.DateOnly, d.text)
		if err != nil {
			return v, q, errBadRequest
		}
		*d.dst = day.AddDate(0, 0, d.days) // "to" includes its whole day
	}
	if !q.Since.IsZero() && !q.Until.IsZero() && !q.Until.After(q.Since) {
		return v, q, errBadRequest
	}
	return v, q, nil
}

// kept is the filters as query parameters, for links that keep them.
func (v auditView) kept() url.Values {
	kept := url.Values{}
	for k, val := range map[string]string{"agent": v.Agent, "actor": v.Actor, "action": v.Action, "from": v.From, "to": v.To} {
		if val != "" {
			kept.Set(k, val)
		}
	}
	return kept
}

// auditExport is GET /admin/audit/export?format=jsonl|csv with the page's
// filters: every entry they select, oldest first, as a download (the same
// export as the API's GET /api/v1/audit/export).
func (u *ui) auditExport(w http.ResponseWriter, r *http.Request) error {
	_, q, err := auditFilter(r)
	if err != nil {
		return err
	}
	format := r.URL.Query().Get("format")
	ctype := map[string]string{registry.AuditJSONLines: "application/jsonl; charset=utf-8", registry.AuditCSV: "text/csv; charset=utf-8"}[format]
	if ctype == "" {
		return errBadRequest
	}
	h := w.Header()
	h.Set("Content-Disposition", `attachment; filename="cardex-audit.`+format+`"`)
	h.Set("Cache-Control", "no-store")
	started := false
	n, err := u.svc.ExportAudit(r.Context(), principal(r), q, format, w, func() {
		started = true
		h.Set("Content-Type", ctype)
		w.WriteHeader(http.StatusOK)
	})
	switch {
	case err != nil && !started:
		h.Del("Content-Disposition")
		return err
	case err != nil:
		u.log.WarnContext(r.Context(), "audit export ended early", "entries", n, "err", err)
	}
	return nil
}
