package web

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/cardexhq/cardex/registry"
)

const auditPageSize = 50

type auditView struct {
	Entries              []auditRow
	Agent, Actor, Action string
	AgentName            string // the agent filtered on, by name
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

// auditPage is GET /admin/audit?agent=&actor=&action=&before=: the audit
// log newest first, in pages of 50, filterable by agent, actor (token id or
// name) and action.
func (u *ui) auditPage(w http.ResponseWriter, r *http.Request) error {
	in := r.URL.Query()
	v := auditView{Agent: in.Get("agent"), Actor: in.Get("actor"), Action: in.Get("action"), Actions: registry.AuditActions}
	if len(v.Agent) > 64 || len(v.Actor) > 200 || (v.Action != "" && !slices.Contains(registry.AuditActions, v.Action)) {
		return errBadRequest
	}
	q := registry.AuditQuery{Newest: true, Limit: auditPageSize, AgentID: v.Agent, Actor: v.Actor}
	if v.Action != "" {
		q.Actions = []string{v.Action}
	}
	if s := in.Get("before"); s != "" {
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
	kept := url.Values{}
	for k, val := range map[string]string{"agent": v.Agent, "actor": v.Actor, "action": v.Action} {
		if val != "" {
			kept.Set(k, val)
		}
	}
	v.Filtered = len(kept) > 0
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
		if who := or(e.ActorID, e.ActorName); who != "" {
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
		parts = append(parts, "visibility "+str("visibility"))
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
