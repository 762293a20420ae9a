package web

import (
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/cardexhq/cardex/registry"
)

// queuePageSize keeps a queue of hundreds to pages a curator can read.
const queuePageSize = 25

// queueViewDef is one tab of the review queue: which agents it lists and
// which decisions it offers on many of them at once.
type queueViewDef struct {
	Name, Label, Empty string
	query              func() registry.ListQuery
	Bulk               []registry.Action
}

var queueViews = []queueViewDef{
	{Name: "pending", Label: "Pending", Empty: "Nothing is waiting.",
		query: func() registry.ListQuery {
			return registry.ListQuery{Status: []registry.Status{registry.StatusPending}}
		},
		Bulk: []registry.Action{registry.ActionApprove, registry.ActionReject}},
	{Name: "flagged", Label: "Flagged for re-review", Empty: "No approved agent lost trust.",
		query: func() registry.ListQuery { yes := true; return registry.ListQuery{NeedsReview: &yes} },
		Bulk:  []registry.Action{registry.ActionApprove, registry.ActionSuspend}},
	{Name: "failing", Label: "Failing and gone", Empty: "Every agent answered its last fetch.",
		query: func() registry.ListQuery {
			return registry.ListQuery{Health: []registry.Health{registry.HealthFailing, registry.HealthGone},
				Status: []registry.Status{registry.StatusPending, registry.StatusApproved, registry.StatusSuspended}}
		},
		Bulk: []registry.Action{registry.ActionSuspend}},
	{Name: "invalid", Label: "Approved, card invalid", Empty: "No approved agent serves a card whose signature fails.",
		query: func() registry.ListQuery {
			return registry.ListQuery{Status: []registry.Status{registry.StatusApproved}, Trust: []registry.Trust{registry.TrustInvalid}}
		},
		Bulk: []registry.Action{registry.ActionSuspend}},
}

func queueViewNamed(name string) (queueViewDef, bool) {
	for _, d := range queueViews {
		if d.Name == name {
			return d, true
		}
	}
	return queueViews[0], name == ""
}

type queueTab struct {
	Name, Label, URL string
	Count            int
	On               bool
}

type queueRow struct {
	registry.Agent
	// ReviewSeq is the version a decision on this row is bound to: the
	// candidate of a flagged agent, else the current version.
	ReviewSeq int64
}

type queueView struct {
	Tabs         []queueTab
	View         queueViewDef
	Rows         []queueRow
	Total        int
	Trust, Host  string
	TrustValues  []string
	Next, First  string
	Here         string // this page's URL, where a bulk decision returns
	Done         string // what the last bulk decision did
	Stale        []string
	StaleMessage string
	// AutoApproved are the newest approvals made by the --auto-approve
	// policy (docs/claims.md), for an admin to look over.
	AutoApproved []registry.AuditEntry
}

// recentAutoApprovals is how many automatic approvals the queue shows.
const recentAutoApprovals = 10

// loadQueue reads GET /admin?view=&trust=&host=&page=: one tab of the
// queue, filtered and paged, with the counts of every tab.
func (u *ui) loadQueue(r *http.Request) (*queueView, error) {
	in := r.URL.Query()
	def, ok := queueViewNamed(in.Get("view"))
	if !ok {
		return nil, errBadRequest
	}
	v := &queueView{View: def, Trust: in.Get("trust"), Host: strings.ToLower(strings.TrimSpace(in.Get("host")))}
	for _, t := range []registry.Trust{registry.TrustVerified, registry.TrustUnsigned, registry.TrustUntrusted,
		registry.TrustInvalid, registry.TrustError, registry.TrustUnknown} {
		v.TrustValues = append(v.TrustValues, string(t))
	}
	if v.Trust != "" && !slices.Contains(v.TrustValues, v.Trust) {
		return nil, errBadRequest
	}
	kept := url.Values{}
	if in.Get("view") != "" {
		kept.Set("view", def.Name)
	}
	filter := func(q registry.ListQuery) registry.ListQuery {
		if v.Trust != "" && q.Trust == nil {
			q.Trust = []registry.Trust{registry.Trust(v.Trust)}
		}
		if v.Host != "" {
			q.Hosts = []string{v.Host}
		}
		return q
	}
	if v.Trust != "" {
		kept.Set("trust", v.Trust)
	}
	if v.Host != "" {
		kept.Set("host", v.Host)
	}
	ctx, p := r.Context(), principal(r)
	for _, d := range queueViews {
		q := filter(d.query())
		q.PageSize = 1
		page, err := u.svc.List(ctx, p, q)
		if err != nil {
			return nil, err
		}
		tab := url.Values{"view": {d.Name}}
		for k, vs := range kept {
			if k != "view" {
				tab[k] = vs
			}
		}
		v.Tabs = append(v.Tabs, queueTab{Name: d.Name, Label: d.Label, Count: page.TotalSize, On: d.Name == def.Name,
			URL: "/admin?" + tab.Encode()})
	}
	q := filter(def.query())
	q.PageSize, q.PageToken, q.Sort = queuePageSize, in.Get("page"), "updated"
	page, err := u.svc.List(ctx, p, q)
	if errors.Is(err, registry.ErrInvalidPageToken) {
		return nil, errBadRequest
	}
	if err != nil {
		return nil, err
	}
	v.Total = page.TotalSize
	for _, a := range page.Agents {
		row := queueRow{Agent: a, ReviewSeq: a.VersionSeq}
		if a.NeedsReview {
			if row.ReviewSeq, err = u.candidateSeq(r, a.ID); err != nil {
				return nil, err
			}
		}
		v.Rows = append(v.Rows, row)
	}
	v.Here = "/admin"
	if len(kept) > 0 {
		v.Here += "?" + kept.Encode()
	}
	if page.NextPageToken != "" {
		next := cloneValues(kept)
		next.Set("page", page.NextPageToken)
		v.Next = "/admin?" + next.Encode()
	}
	if in.Get("page") != "" {
		v.First = v.Here
	}
	auto, err := u.svc.AuditLog(ctx, p, registry.AuditQuery{Newest: true, Actions: []string{registry.ActionAutoApprove}, Limit: recentAutoApprovals})
	if err != nil {
		return nil, err
	}
	v.AutoApproved = auto.Entries
	v.Done, v.Stale = bulkSummary(in)
	if len(v.Stale) > 0 {
		v.StaleMessage = strconv.Itoa(len(v.Stale)) + " not changed: their card or status changed since the list was shown. Review them again:"
	}
	return v, nil
}

// candidateSeq is the version waiting for review of a flagged agent.
func (u *ui) candidateSeq(r *http.Request, id string) (int64, error) {
	vs, err := u.svc.Versions(r.Context(), principal(r), id)
	if err != nil {
		return 0, err
	}
	for _, ver := range vs {
		if ver.Candidate {
			return ver.Seq, nil
		}
	}
	return 0, nil
}

// maxBulk bounds one bulk decision to a page of the queue.
const maxBulk = queuePageSize

// bulkAct is POST /admin/bulk: one decision, one reason, on the agents
// ticked in a queue page. Each is bound to the version shown in that row
// ("id:seq"), acts through the same use case as the review page (one
// audit entry per agent), and an agent whose card or status changed since
// is left alone and listed back to the curator.
func (u *ui) bulkAct(w http.ResponseWriter, r *http.Request) error {
	form, err := postForm(w, r)
	if err != nil {
		return err
	}
	a := registry.Action(form.Get("action"))
	if !slices.Contains([]registry.Action{registry.ActionApprove, registry.ActionReject, registry.ActionSuspend}, a) {
		return errBadRequest
	}
	picked := form["agent"]
	if len(picked) == 0 || len(picked) > maxBulk {
		return errBadRequest
	}
	type target struct {
		id  string
		seq int64
	}
	var ts []target
	for _, s := range picked {
		id, seqText, ok := strings.Cut(s, ":")
		seq, err := strconv.ParseInt(seqText, 10, 64)
		if !ok || id == "" || err != nil || seq < 0 {
			return errBadRequest
		}
		ts = append(ts, target{id, seq})
	}
	reason := form.Get("reason")
	items := make([]registry.BulkItem, len(ts))
	for i, t := range ts {
		seq := t.seq
		items[i] = registry.BulkItem{ID: t.id, VersionSeq: &seq}
	}
	// One transaction for the page, each agent at the version shown
	// (registry.ActMany); an agent that changed since is listed back.
	res, err := u.svc.ActMany(r.Context(), principal(r), a, items, reason)
	if err != nil {
		return err
	}
	done, stale := 0, []string{}
	for _, it := range res {
		if it.Err == nil {
			done++
		} else {
			stale = append(stale, it.ID)
		}
	}
	back, err := url.Parse(form.Get("back"))
	if err != nil || back.Path != "/admin" || back.Host != "" || back.Scheme != "" {
		back = &url.URL{Path: "/admin"}
	}
	q := back.Query()
	q.Del("page")
	q.Set("done", string(a))
	q.Set("n", strconv.Itoa(done))
	if len(stale) > 0 {
		q.Set("stale", strings.Join(stale, ","))
	}
	back.RawQuery = q.Encode()
	return seeOther(w, r, back.String())
}

var bulkWords = map[string]string{"approve": "Approved", "reject": "Rejected", "suspend": "Suspended"}

// bulkSummary reads the outcome a bulk decision redirected with.
func bulkSummary(in url.Values) (string, []string) {
	w := bulkWords[in.Get("done")]
	if w == "" {
		return "", nil
	}
	n, err := strconv.Atoi(in.Get("n"))
	if err != nil || n < 0 {
		return "", nil
	}
	var stale []string
	for _, id := range strings.Split(in.Get("stale"), ",") {
		if id != "" && len(stale) < maxBulk {
			stale = append(stale, id)
		}
	}
	return w + " " + plural(n, "agent") + ".", stale
}
