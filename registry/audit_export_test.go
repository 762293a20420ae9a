package registry_test

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/cardexhq/cardex/registry"
	"github.com/cardexhq/cardex/registry/registrytest"
)

// The audit log filters by actor, action, agent and time, and exports what
// a filter selects as JSON Lines or CSV, every page of it.
func TestAuditFiltersAndExport(t *testing.T) {
	registrytest.EachStore(t, func(t *testing.T, s *registry.Store) {
		c := newClock()
		svc := newService(s, c)
		ctx := t.Context()
		start := c.Now()
		a := mustSubmit(t, svc, "https://a.example.com/")
		crawl(t, svc, c, a.ID, okResult(t, c.Now(), cardJSON("A", "1"), registry.TrustUnsigned))
		other := registry.Principal{Role: registry.RoleAdmin, TokenID: "t-other", Name: "=cmd|' /C calc'!A0"}
		if _, err := svc.Act(ctx, admin, a.ID, registry.ActionApprove, registry.ActionRequest{VersionSeq: seq(1), Reason: "ok, \"quoted\"\nline"}); err != nil {
			t.Fatal(err)
		}
		c.Advance(2 * time.Hour)
		mid := c.Now()
		if _, err := svc.Act(ctx, other, a.ID, registry.ActionSuspend, registry.ActionRequest{Reason: "-incident"}); err != nil {
			t.Fatal(err)
		}
		for _, tc := range []struct {
			q    registry.AuditQuery
			want []string
		}{
			{registry.AuditQuery{}, []string{"submit", "approve", "suspend"}},
			{registry.AuditQuery{Actor: "t-other"}, []string{"suspend"}},
			{registry.AuditQuery{Actor: admin.Name}, []string{"approve"}},
			{registry.AuditQuery{Actions: []string{"approve", "suspend"}}, []string{"approve", "suspend"}},
			{registry.AuditQuery{AgentID: "nope"}, nil},
			{registry.AuditQuery{Since: mid}, []string{"suspend"}},
			{registry.AuditQuery{Until: mid}, []string{"submit", "approve"}},
			{registry.AuditQuery{Since: start, Until: mid, Actions: []string{"approve"}}, []string{"approve"}},
			{registry.AuditQuery{Since: mid.Add(time.Hour)}, nil},
		} {
			page, err := svc.AuditLog(ctx, admin, tc.q)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, e := range page.Entries {
				got = append(got, e.Action)
			}
			if strings.Join(got, ",") != strings.Join(tc.want, ",") {
				t.Errorf("%+v: %v, want %v", tc.q, got, tc.want)
			}
		}
		var jl bytes.Buffer
		n, err := svc.ExportAudit(ctx, admin, registry.AuditQuery{AgentID: a.ID}, registry.AuditJSONLines, &jl, nil)
		if err != nil || n != 3 {
			t.Fatalf("jsonl export: %d, %v", n, err)
		}
		lines := strings.Split(strings.TrimSuffix(jl.String(), "\n"), "\n")
		var e registry.AuditEntry
		if len(lines) != 3 || json.Unmarshal([]byte(lines[1]), &e) != nil || e.Action != "approve" || e.Reason != "ok, \"quoted\"\nline" || e.Detail["versionSeq"] != float64(1) {
			t.Fatalf("jsonl %q", jl.String())
		}
		var cb bytes.Buffer
		if n, err := svc.ExportAudit(ctx, admin, registry.AuditQuery{Since: start}, registry.AuditCSV, &cb, nil); err != nil || n != 3 {
			t.Fatalf("csv export: %d, %v", n, err)
		}
		rows, err := csv.NewReader(&cb).ReadAll()
		if err != nil || len(rows) != 4 {
			t.Fatalf("csv %q: %v", cb.String(), err)
		}
		if strings.Join(rows[0], ",") != "seq,at,actorId,actorName,action,agentId,reason,detail,actorSubject,actorDisplayName" {
			t.Errorf("header %v", rows[0])
		}
		if rows[2][4] != "approve" || rows[2][6] != "ok, \"quoted\"\nline" || rows[2][7] != `{"from":"pending","to":"approved","versionSeq":1}` {
			t.Errorf("approve row %q", rows[2])
		}
		// Cells a spreadsheet would read as formulas are defused.
		if rows[3][3] != "'=cmd|' /C calc'!A0" || rows[3][6] != "'-incident" {
			t.Errorf("suspend row %q", rows[3])
		}
		if _, err := svc.ExportAudit(ctx, admin, registry.AuditQuery{}, "xml", &cb, nil); !errors.Is(err, registry.ErrValidation) {
			t.Errorf("xml: %v", err)
		}
		if _, err := svc.ExportAudit(ctx, registry.Principal{Role: registry.RoleReader, TokenID: "r"}, registry.AuditQuery{}, registry.AuditCSV, &cb, nil); !errors.Is(err, registry.ErrForbidden) {
			t.Errorf("reader: %v", err)
		}
	})
}

// An export of more than one page of the log holds every entry once.
func TestAuditExportPages(t *testing.T) {
	store, err := registry.Open(t.Context(), registry.OpenOptions{DataDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	c := newClock()
	svc := newService(store, c)
	for i := range 1002 {
		if _, err := svc.Submit(t.Context(), registry.Anonymous, "https://h"+itoa(i)+".example.com/", ""); err != nil {
			t.Fatal(err)
		}
	}
	var b bytes.Buffer
	n, err := svc.ExportAudit(t.Context(), admin, registry.AuditQuery{Actions: []string{"submit"}}, registry.AuditJSONLines, &b, nil)
	if err != nil || n != 1002 || strings.Count(b.String(), "\n") != 1002 {
		t.Fatalf("exported %d (%d lines), %v", n, strings.Count(b.String(), "\n"), err)
	}
}
