package web

import (
	"net/http"
	"strconv"
)

type versionPageView struct {
	*agentView
	V          versionView
	Signatures []signatureView
	Raw        string // "" when RawTooLarge
	RawBytes   int
	// RawTooLarge: the version is over maxInlineCard and offered as JSON
	// from the API only.
	RawTooLarge bool
	Prev, Next  int64 // neighbouring stored versions, 0 when none
	JSONURL     string
}

// versionPage is GET /agents/{id}/versions/{seq}: one stored version as it
// was served, with its verdict, problems and the changes from the version
// before it. Whoever may read the agent may read its history.
func (u *ui) versionPage(w http.ResponseWriter, r *http.Request) error {
	seq, err := strconv.ParseInt(r.PathValue("seq"), 10, 64)
	if err != nil || seq < 1 {
		return errNotFound
	}
	av, err := u.loadAgent(r, r.PathValue("id"))
	if err != nil {
		return err
	}
	ver, err := u.svc.Version(r.Context(), principal(r), av.A.ID, seq)
	if err != nil {
		return err
	}
	v := &versionPageView{agentView: av, Signatures: signatureViews(ver.Signatures),
		RawBytes: len(ver.Raw), RawTooLarge: len(ver.Raw) > maxInlineCard, JSONURL: "/api/v1/agents/" + av.A.ID + "/versions/" + strconv.FormatInt(seq, 10)}
	if !v.RawTooLarge {
		v.Raw = pretty(ver.Raw)
	}
	for i, vv := range av.Versions { // newest first
		if vv.Seq != seq {
			continue
		}
		v.V = vv
		if i > 0 {
			v.Next = av.Versions[i-1].Seq
		}
		if i+1 < len(av.Versions) {
			v.Prev = av.Versions[i+1].Seq
		}
	}
	name := av.A.Host
	if av.Card != nil && av.Card.Name != "" {
		name = av.Card.Name
	}
	u.render(w, r, http.StatusOK, "agent_version", "Version "+strconv.FormatInt(seq, 10)+" of "+visible(name), v)
	return nil
}
