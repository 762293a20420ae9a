package api

import (
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/cardexhq/cardex/registry"
)

// auditFilters reads the audit log's filters — agentId, actor, action
// (repeatable), since and until (RFC 3339) — shared by the paged log and
// its export (docs/api.md "Audit log").
func auditFilters(c echo.Context) (registry.AuditQuery, error) {
	qv := c.QueryParams()
	var q registry.AuditQuery
	for _, name := range []string{"agentId", "actor", "since", "until", "format"} {
		if len(qv[name]) > 1 {
			return q, fieldProblem("/"+name, "repeated", name+" may be given only once")
		}
	}
	q.AgentID, q.Actor = clip(qv.Get("agentId"), 64), clip(qv.Get("actor"), 200)
	var err error
	if q.Actions, err = enumParam(c, "action", registry.AuditActions...); err != nil {
		return q, err
	}
	for _, b := range []struct {
		name string
		dst  *time.Time
	}{{"since", &q.Since}, {"until", &q.Until}} {
		v := qv.Get(b.name)
		if v == "" {
			continue
		}
		t, err := time.Parse(time.RFC3339Nano, v)
		if err != nil {
			return q, fieldProblem("/"+b.name, "format", b.name+" must be an RFC 3339 time such as 2026-11-27T00:00:00Z")
		}
		*b.dst = t
	}
	if !q.Since.IsZero() && !q.Until.IsZero() && !q.Until.After(q.Since) {
		return q, fieldProblem("/until", "range", "until must be later than since")
	}
	return q, nil
}

// auditExportTypes are the media types of the export formats.
var auditExportTypes = map[string]string{
	registry.AuditJSONLines: "application/jsonl; charset=utf-8",
	registry.AuditCSV:       "text/csv; charset=utf-8",
}

// exportAudit is GET /api/v1/audit/export?format=jsonl|csv with the log's
// filters (admin): every entry they select, oldest first, as a download.
func (s *server) exportAudit(c echo.Context) error {
	if principal(c).Role != registry.RoleAdmin {
		return registry.ErrForbidden // before looking at the parameters
	}
	if err := checkParams(c.QueryParams(), "format", "agentId", "actor", "action", "since", "until"); err != nil {
		return err
	}
	q, err := auditFilters(c)
	if err != nil {
		return err
	}
	format := c.QueryParam("format")
	if format == "" {
		format = registry.AuditJSONLines
	}
	ctype, ok := auditExportTypes[format]
	if !ok {
		return fieldProblem("/format", "enum", "format must be jsonl or csv")
	}
	h := c.Response().Header()
	h.Set("Content-Disposition", `attachment; filename="cardex-audit.`+format+`"`)
	h.Set("Cache-Control", "no-store")
	started := false
	n, err := s.svc.ExportAudit(c.Request().Context(), principal(c), q, format, c.Response(), func() {
		started = true
		h.Set(echo.HeaderContentType, ctype)
		c.Response().WriteHeader(http.StatusOK)
	})
	switch {
	case err != nil && !started:
		h.Del("Content-Disposition")
		return err
	case err != nil:
		// After the first byte a failure cannot become a problem any
		// more: the download ends short, and the log says why.
		s.log.Warn("audit export ended early", "entries", n, "err", err)
	}
	return nil
}
