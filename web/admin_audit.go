package web

import (
	"encoding/json"
	"net/http"
	"strconv"

	"github.com/cardexhq/cardex/registry"
)

const auditPageSize = 100

type auditView struct {
	Entries []auditRow
	Next    string
}

type auditRow struct {
	registry.AuditEntry
	DetailText string
}

// auditPage is GET /admin/audit?after=SEQ: the audit log, oldest first,
// in pages of 100.
func (u *ui) auditPage(w http.ResponseWriter, r *http.Request) error {
	var after int64
	if s := r.URL.Query().Get("after"); s != "" {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil || n < 0 {
			return errBadRequest
		}
		after = n
	}
	es, next, err := u.svc.Audit(r.Context(), principal(r), after, auditPageSize)
	if err != nil {
		return err
	}
	v := auditView{}
	for _, e := range es {
		row := auditRow{AuditEntry: e}
		if len(e.Detail) > 0 {
			b, _ := json.Marshal(e.Detail)
			row.DetailText = string(b)
		}
		v.Entries = append(v.Entries, row)
	}
	if len(es) == auditPageSize {
		v.Next = "/admin/audit?after=" + strconv.FormatInt(next, 10)
	}
	u.render(w, r, http.StatusOK, "admin_audit", "Audit log", v)
	return nil
}
