package api

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/cardexhq/cardex/registry"
	"github.com/cardexhq/cardex/registry/registrytest"
)

// A rebuild can outlast the server's write timeout (a minute for 100,000
// agents): the reindex answer must still reach the admin, while other
// routes keep the timeout.
func TestReindexAnswerOutlivesWriteTimeout(t *testing.T) {
	store := registrytest.SQLite(t)
	svc := registry.NewService(store, registry.ServiceConfig{})
	secret, _, err := svc.CreateToken(t.Context(), registry.TokenRequest{Role: registry.RoleAdmin})
	if err != nil {
		t.Fatal(err)
	}
	const writeTimeout = 150 * time.Millisecond
	handler, err := New(Config{Service: svc, Ready: store, Reindex: func(ctx context.Context) error {
		// The rebuild takes longer than the write timeout.
		select {
		case <-time.After(3 * writeTimeout):
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(handler)
	srv.Config.WriteTimeout = writeTimeout
	srv.Start()
	defer srv.Close()

	req, _ := http.NewRequestWithContext(t.Context(), "POST", srv.URL+"/api/v1/admin/reindex", strings.NewReader(`{}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+secret)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("reindex answer lost to the write timeout: %v", err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusOK || !strings.Contains(string(body), `"status":"rebuilt"`) {
		t.Fatalf("reindex: %d %s", res.StatusCode, body)
	}
}
