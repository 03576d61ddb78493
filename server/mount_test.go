package server

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stratasearch/strata/engine"
)

// TestMount: a mounted handler runs behind the API keys with the key's
// principal, and its POSTs count against MaxConcurrency.
func TestMount(t *testing.T) {
	dir := t.TempDir()
	db, err := engine.Open(dir, engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	s, err := New(db, Options{DataDir: dir, MaxConcurrency: 1, APIKeys: []APIKey{{Key: "ka", Principal: "alice", Namespaces: []string{"a/"}}}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	hold, release := make(chan struct{}), make(chan struct{})
	s.Mount("/x", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, admin := CallerOf(r.Context())
		if p == nil || p.Name != "alice" || admin {
			t.Errorf("caller %+v admin %v", p, admin)
		}
		if r.URL.Query().Get("hold") != "" {
			close(hold)
			<-release
		}
		w.Write([]byte("ok"))
	}))
	ts := httptest.NewServer(s)
	defer ts.Close()
	do := func(key, q string) int {
		req, _ := http.NewRequest("POST", ts.URL+"/x"+q, strings.NewReader("{}"))
		if key != "" {
			req.Header.Set("Authorization", "Bearer "+key)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if c := do("", ""); c != http.StatusUnauthorized {
		t.Fatalf("no key: %d", c)
	}
	if c := do("ka", ""); c != http.StatusOK {
		t.Fatalf("key: %d", c)
	}
	held := make(chan int)
	go func() { held <- do("ka", "?hold=1") }()
	<-hold
	c := do("ka", "")
	close(release)
	if h := <-held; h != http.StatusOK {
		t.Errorf("held request: %d", h)
	}
	if c != http.StatusTooManyRequests {
		t.Fatalf("over MaxConcurrency: %d", c)
	}
}
