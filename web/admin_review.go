package web

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/cardexhq/cardex/agentcard"
	"github.com/cardexhq/cardex/registry"
)

type reviewView struct {
	*agentView
	Agent   *agentView // the same, for templates that take the agent view
	Actions []registry.Action
	// ReviewSeq is the version the approve form is bound to: the candidate
	// of a flagged agent, else the current version (docs/threats.md F.65).
	ReviewSeq int64
	// SinceApproved is the diff from the approved (current) version to the
	// candidate of a flagged agent.
	SinceApproved       []changeView
	Candidate           *registry.Version
	CandidateSignatures []signatureView
	Done, Error         string
	Fetches             []registry.FetchAttempt
}

// review is GET /admin/agents/{id}: the card, its problems and trust, the
// diff a re-review is about, and the curation actions.
func (u *ui) review(w http.ResponseWriter, r *http.Request) error {
	v, err := u.loadReview(r, r.PathValue("id"))
	if err != nil {
		return err
	}
	v.Done = doneWords[r.URL.Query().Get("done")]
	u.render(w, r, http.StatusOK, "admin_review", "Review", v)
	return nil
}

var doneWords = map[string]string{
	"approve": "Approved.", "reject": "Rejected.", "decline": "Declined: the last trusted version stays current.", "suspend": "Suspended.", "restore": "Restored.",
	"remove": "Removed.", "keys": "Keys pinned; the agent will be fetched again.", "unpin": "Pinned keys removed.",
	"crawl": "A fetch was requested.", "visibility": "Visibility changed.",
	"probing": "Liveness probing changed.",
}

func (u *ui) loadReview(r *http.Request, id string) (*reviewView, error) {
	av, err := u.loadAgent(r, id)
	if err != nil {
		return nil, err
	}
	v := &reviewView{agentView: av, Agent: av, Actions: actionsFor(av.A), ReviewSeq: av.A.VersionSeq}
	for i := range av.Versions {
		if ver := av.Versions[i].Version; ver.Candidate && av.A.NeedsReview {
			v.ReviewSeq = ver.Seq
			if v.SinceApproved, err = u.diffSince(r, id, av.A.VersionSeq, ver.Seq); err != nil {
				return nil, err
			}
			v.Candidate = &av.Versions[i].Version
			v.CandidateSignatures = signatureViews(ver.Signatures)
		}
	}
	if v.Fetches, err = u.svc.Fetches(r.Context(), principal(r), id, 10); err != nil {
		return nil, err
	}
	return v, nil
}

// diffSince compares two stored versions by re-parsing their raw bytes, the
// one source every view of a card comes from.
func (u *ui) diffSince(r *http.Request, id string, from, to int64) ([]changeView, error) {
	cards := make([]*agentcard.Card, 2)
	for i, seq := range []int64{from, to} {
		if seq == 0 {
			continue
		}
		ver, err := u.svc.Version(r.Context(), principal(r), id, seq)
		if err != nil {
			return nil, err
		}
		p, err := agentcard.Parse(ver.Raw, agentcard.Options{})
		if err != nil {
			return nil, fmt.Errorf("web: stored version %d of %s does not parse: %w", seq, id, err)
		}
		cards[i] = p.Card
	}
	if cards[0] == nil || cards[1] == nil {
		return nil, nil
	}
	var out []changeView
	for _, c := range agentcard.Diff(cards[0], cards[1]) {
		out = append(out, changeOf(c))
	}
	return out, nil
}

// act is POST /admin/agents/{id}/act: approve, reject, suspend, restore or
// remove, with a reason, bound to the version the admin saw. A stale
// version shows the conflict and the page as it is now (F.65).
func (u *ui) act(w http.ResponseWriter, r *http.Request) error {
	id := r.PathValue("id")
	form, err := postForm(w, r)
	if err != nil {
		return err
	}
	a := registry.Action(form.Get("action"))
	req := registry.ActionRequest{Reason: form.Get("reason")}
	if s := form.Get("versionSeq"); s != "" {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return errBadRequest
		}
		req.VersionSeq = &n
	}
	after, err := u.svc.Act(r.Context(), principal(r), id, a, req)
	var vc *registry.VersionConflictError
	switch {
	case err == nil:
		if a == registry.ActionRestore {
			u.kick()
		}
		done := string(a)
		if a == registry.ActionReject && after.Status == registry.StatusApproved {
			done = "decline"
		}
		return seeOther(w, r, "/admin/agents/"+id+"?done="+done)
	case errors.As(err, &vc) && vc.CurrentVersionSeq == 0:
		return u.reviewError(w, r, id, http.StatusConflict, "Nothing has been fetched yet: there is no version to approve.")
	case errors.As(err, &vc):
		return u.reviewError(w, r, id, http.StatusConflict,
			fmt.Sprintf("The card changed since you opened this page: version %d is now the one under review. Review it again.", vc.CurrentVersionSeq))
	case errors.Is(err, registry.ErrInvalidTransition):
		return u.reviewError(w, r, id, http.StatusConflict, "That action does not apply to the agent's current status.")
	case errors.Is(err, registry.ErrValidation):
		return u.reviewError(w, r, id, http.StatusBadRequest, "That action is not valid here.")
	}
	return err
}

func (u *ui) reviewError(w http.ResponseWriter, r *http.Request, id string, status int, msg string) error {
	v, err := u.loadReview(r, id)
	if err != nil {
		return err
	}
	v.Error = msg
	u.render(w, r, status, "admin_review", "Review", v)
	return nil
}

// pinKeys is POST /admin/agents/{id}/keys with a pasted JWKS.
func (u *ui) pinKeys(w http.ResponseWriter, r *http.Request) error {
	form, err := postForm(w, r)
	if err != nil {
		return err
	}
	_, err = u.svc.PinKeys(r.Context(), principal(r), r.PathValue("id"), []byte(form.Get("jwks")))
	var ve *registry.ValidationError
	if errors.As(err, &ve) && len(ve.Errors) > 0 {
		return u.reviewError(w, r, r.PathValue("id"), http.StatusBadRequest, "The key set was not pinned: "+ve.Errors[0].Message+".")
	}
	if err != nil {
		return err
	}
	u.kick()
	return seeOther(w, r, "/admin/agents/"+r.PathValue("id")+"?done=keys")
}

// unpinKeys is POST /admin/agents/{id}/unpin.
func (u *ui) unpinKeys(w http.ResponseWriter, r *http.Request) error {
	if _, err := u.svc.UnpinKeys(r.Context(), principal(r), r.PathValue("id")); err != nil {
		return err
	}
	u.kick()
	return seeOther(w, r, "/admin/agents/"+r.PathValue("id")+"?done=unpin")
}

// crawl is POST /admin/agents/{id}/crawl: fetch again now.
func (u *ui) crawl(w http.ResponseWriter, r *http.Request) error {
	_, err := u.svc.RequestCrawl(r.Context(), principal(r), r.PathValue("id"))
	if errors.Is(err, registry.ErrInvalidTransition) {
		return u.reviewError(w, r, r.PathValue("id"), http.StatusConflict, "Rejected and removed agents are not fetched.")
	}
	if err != nil {
		return err
	}
	u.kick()
	return seeOther(w, r, "/admin/agents/"+r.PathValue("id")+"?done=crawl")
}

// setProbing is POST /admin/agents/{id}/probing: the per-agent off switch
// of liveness probes (docs/liveness.md).
func (u *ui) setProbing(w http.ResponseWriter, r *http.Request) error {
	form, err := postForm(w, r)
	if err != nil {
		return err
	}
	var enabled bool
	switch form.Get("enabled") {
	case "true":
		enabled = true
	case "false":
	default:
		return errBadRequest
	}
	if _, err := u.svc.SetProbing(r.Context(), principal(r), r.PathValue("id"), enabled); err != nil {
		return err
	}
	return seeOther(w, r, "/admin/agents/"+r.PathValue("id")+"?done=probing")
}

// setVisibility is POST /admin/agents/{id}/visibility.
func (u *ui) setVisibility(w http.ResponseWriter, r *http.Request) error {
	form, err := postForm(w, r)
	if err != nil {
		return err
	}
	var groups []string
	if vis := registry.Visibility(form.Get("visibility")); vis == registry.VisibilityGroups {
		groups = splitGroups(form.Get("groups"))
	}
	_, err = u.svc.SetVisibility(r.Context(), principal(r), r.PathValue("id"), registry.Visibility(form.Get("visibility")), groups...)
	var ve *registry.ValidationError
	if errors.As(err, &ve) && len(ve.Errors) > 0 {
		return u.reviewError(w, r, r.PathValue("id"), http.StatusBadRequest, "The visibility was not changed: "+ve.Errors[0].Message+".")
	}
	if err != nil {
		return err
	}
	return seeOther(w, r, "/admin/agents/"+r.PathValue("id")+"?done=visibility")
}

// splitGroups reads the groups of a form field: names separated by commas
// or line breaks, each trimmed (a group name holds no comma; registry
// NormalizeGroups).
func splitGroups(s string) []string {
	var out []string
	for _, g := range strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == '\n' || r == '\r' }) {
		if g = strings.TrimSpace(g); g != "" {
			out = append(out, g)
		}
	}
	return out
}

func postForm(w http.ResponseWriter, r *http.Request) (url.Values, error) {
	r.Body = http.MaxBytesReader(w, r.Body, maxFormBytes)
	if err := r.ParseForm(); err != nil {
		return nil, errBadRequest
	}
	return r.PostForm, nil
}
