package mcp

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/stratasearch/strata/engine"
	"github.com/stratasearch/strata/engine/contract"
	"github.com/stratasearch/strata/server"
)

// jobServer is a server.Server (the job runner) over db whose data
// directory is dir and whose index root is root.
func jobServer(t testing.TB, db *engine.DB, dir, root string) *server.Server {
	t.Helper()
	js, err := server.New(db, server.Options{DataDir: dir, IndexRoots: []string{root}, Logger: quietSlog()})
	if err != nil {
		t.Fatal(err)
	}
	return js
}

func quietSlog() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// connectWith is connect with client options (notification handlers).
func connectWith(t testing.TB, s *Server, c Caller, co *sdk.ClientOptions) *sdk.ClientSession {
	t.Helper()
	ct, st := sdk.NewInMemoryTransports()
	ctx := context.Background()
	ss, err := s.SDKServer(c).Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "1"}, co).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close(); ss.Wait() })
	return cs
}

var jobToolNames = []string{"job"}

// waitState polls job (by job_id) until the job is in one of want.
func waitState(t *testing.T, cs *sdk.ClientSession, id string, want ...string) map[string]any {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		_, m, _ := callTool(t, cs, "job", map[string]any{"job_id": id, "log_lines": 50})
		if st, _ := m["state"].(string); slices.Contains(want, st) {
			return m
		}
		if time.Now().After(deadline) {
			t.Fatalf("job %s: %v, want state %v", id, m, want)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestMCPJobToolsAdminOnly: an ordinary caller neither sees nor can call
// the job tool (to start or to follow a job); an admin caller sees it; both
// listings stay within the token ceiling.
func TestMCPJobToolsAdminOnly(t *testing.T) {
	root, db := fixture(t)
	js := jobServer(t, db, t.TempDir(), root)
	defer js.Close()
	s := newServer(t, db, root, func(o *Options) { o.Jobs = js })
	list := func(cs *sdk.ClientSession) []string {
		lt, err := cs.ListTools(context.Background(), nil)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, tl := range lt.Tools {
			names = append(names, tl.Name)
		}
		return names
	}
	user := connect(t, s, Caller{})
	for _, n := range list(user) {
		if slices.Contains(jobToolNames, n) {
			t.Fatalf("ordinary caller sees job tool %s", n)
		}
	}
	for _, args := range []map[string]any{{"kind": "flush"}, {"job_id": strings.Repeat("0", 32)}, {"job_id": strings.Repeat("0", 32), "cancel": true}} {
		res, err := user.CallTool(context.Background(), &sdk.CallToolParams{Name: "job", Arguments: args})
		if err == nil && !res.IsError {
			t.Fatalf("ordinary caller called job %v: %+v", args, res)
		}
	}
	admin := connect(t, s, Caller{Admin: true})
	got := list(admin)
	for _, n := range jobToolNames {
		if !slices.Contains(got, n) {
			t.Fatalf("admin does not see %s: %v", n, got)
		}
	}
	// Admin without a job runner: no job tools either.
	bare := newServer(t, db, root, nil)
	for _, n := range list(connect(t, bare, Caller{Admin: true})) {
		if slices.Contains(jobToolNames, n) {
			t.Fatalf("server without jobs lists %s", n)
		}
	}
	if _, tokens := s.Definitions(); tokens > MaxDefinitionTokens {
		t.Fatalf("ordinary tool definitions: %d tokens", tokens)
	}
	if _, all := s.DefinitionsFor(true); all > MaxDefinitionTokens {
		t.Fatalf("admin tool definitions: %d tokens", all)
	}
}

// TestMCPIndexJobNotifies: an index job returns a job id at once; completion
// arrives as a logging notification (and a progress notification with the
// call's token); job then reads completed with progress 1, and the
// indexed file is searchable.
func TestMCPIndexJobNotifies(t *testing.T) {
	root, db := fixture(t)
	if err := os.WriteFile(filepath.Join(root, "sub", "fresh.go"), []byte("package sub\n\n// Zanzibar is new.\nfunc Zanzibar() {}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	js := jobServer(t, db, t.TempDir(), root)
	defer js.Close()
	s := newServer(t, db, root, func(o *Options) { o.Jobs = js })
	logs := make(chan *sdk.LoggingMessageParams, 8)
	progress := make(chan *sdk.ProgressNotificationParams, 8)
	cs := connectWith(t, s, Caller{Admin: true}, &sdk.ClientOptions{
		LoggingMessageHandler:       func(_ context.Context, r *sdk.LoggingMessageRequest) { logs <- r.Params },
		ProgressNotificationHandler: func(_ context.Context, r *sdk.ProgressNotificationClientRequest) { progress <- r.Params },
	})
	if err := cs.SetLoggingLevel(context.Background(), &sdk.SetLoggingLevelParams{Level: "info"}); err != nil {
		t.Fatal(err)
	}
	p := &sdk.CallToolParams{Name: "job", Arguments: map[string]any{"kind": "index", "path": "sub"}}
	p.SetProgressToken("tok-1")
	res, err := cs.CallTool(context.Background(), p)
	if err != nil || res.IsError {
		t.Fatalf("index: %v %+v", err, res)
	}
	var r jobResult
	b, _ := json.Marshal(res.StructuredContent)
	if err := json.Unmarshal(b, &r); err != nil || len(r.JobID) != 32 || (r.State != "queued" && r.State != "running" && r.State != "completed") {
		t.Fatalf("index result %s", b)
	}
	select {
	case lm := <-logs:
		d, _ := json.Marshal(lm.Data)
		var end jobResult
		json.Unmarshal(d, &end)
		if lm.Logger != "strata.jobs" || lm.Level != "notice" || end.JobID != r.JobID || end.State != "completed" || end.Progress != 1 {
			t.Fatalf("completion notification %s %s %s", lm.Logger, lm.Level, d)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("no completion notification")
	}
	select {
	case pn := <-progress:
		if pn.ProgressToken != "tok-1" || pn.Progress != 1 || !strings.Contains(pn.Message, r.JobID) || !strings.Contains(pn.Message, "completed") {
			t.Fatalf("progress notification %+v", pn)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no progress notification")
	}
	m := waitState(t, cs, r.JobID, "completed")
	if m["progress"] != 1.0 || !strings.Contains(strings.Join(anyStrings(m["log"]), "\n"), "indexed: files=") {
		t.Fatalf("job %v", m)
	}
	_, hits, _ := callTool(t, cs, "find_definition", map[string]any{"symbol": "Zanzibar"})
	if h, _ := hits["hits"].([]any); len(h) == 0 {
		t.Fatalf("indexed symbol not found: %v", hits)
	}
}

func anyStrings(v any) []string {
	var out []string
	xs, _ := v.([]any)
	for _, x := range xs {
		s, _ := x.(string)
		out = append(out, s)
	}
	return out
}

// TestMCPIndexPathConfined: paths outside the roots are refused before any
// job is queued: absolute paths elsewhere, "..", a symbolic link out.
func TestMCPIndexPathConfined(t *testing.T) {
	root, db := fixture(t)
	outside := t.TempDir()
	if err := os.Symlink(outside, filepath.Join(root, "escape")); err != nil {
		t.Fatal(err)
	}
	js := jobServer(t, db, t.TempDir(), root)
	defer js.Close()
	s := newServer(t, db, root, func(o *Options) { o.Jobs = js })
	cs := connect(t, s, Caller{Admin: true})
	for _, p := range []string{outside, "../" + filepath.Base(outside), "escape", "sub/../..", "/", "a.go", "missing"} {
		res, m, _ := callTool(t, cs, "job", map[string]any{"kind": "index", "path": p})
		errs, _ := m["errors"].([]any)
		if !res.IsError || m["status"] != "validation_error" || len(errs) != 1 {
			t.Fatalf("index %q: %v", p, m)
		}
		if loc, _ := errs[0].(map[string]any)["loc"].([]any); len(loc) != 2 || loc[1] != "path" {
			t.Fatalf("index %q: loc %v", p, errs[0])
		}
	}
}

// TestMCPJobCancelAndRestart: job with cancel stops a running job (then
// reports it finished); a job running when the job runner stops reads
// interrupted, with the reason, through job of a new server on the same
// data directory.
func TestMCPJobCancelAndRestart(t *testing.T) {
	root, db := fixture(t)
	dir := t.TempDir()
	js := jobServer(t, db, dir, root)
	started := make(chan struct{}, 4)
	hold := server.CollectionJob(func(ctx context.Context, c *engine.Collection, p *server.Progress) error {
		p.Logf("holding")
		started <- struct{}{}
		<-ctx.Done()
		return ctx.Err()
	})
	js.RegisterJobKind("compact", hold)
	s := newServer(t, db, root, func(o *Options) { o.Jobs = js })
	cs := connect(t, s, Caller{Admin: true})

	_, m, _ := callTool(t, cs, "job", map[string]any{"kind": "compact"})
	id, _ := m["job_id"].(string)
	<-started
	if _, m, _ = callTool(t, cs, "job", map[string]any{"job_id": id, "cancel": true}); m["job_id"] != id {
		t.Fatalf("job cancel %v", m)
	}
	waitState(t, cs, id, "cancelled")
	if res, m, _ := callTool(t, cs, "job", map[string]any{"job_id": id, "cancel": true}); !res.IsError || m["status"] != "conflict" {
		t.Fatalf("cancel of a finished job: %v", m)
	}
	if res, m, _ := callTool(t, cs, "job", map[string]any{"job_id": strings.Repeat("ab", 16)}); !res.IsError || m["status"] != "not_found" {
		t.Fatalf("unknown job: %v", m)
	}

	// A timeout ends the job timed_out.
	_, m, _ = callTool(t, cs, "job", map[string]any{"kind": "compact", "timeout_seconds": 1})
	tid, _ := m["job_id"].(string)
	<-started
	waitState(t, cs, tid, "timed_out")

	_, m, _ = callTool(t, cs, "job", map[string]any{"kind": "compact"})
	rid, _ := m["job_id"].(string)
	<-started
	_, m, _ = callTool(t, cs, "job", map[string]any{"kind": "flush"})
	qid, _ := m["job_id"].(string)
	js.Close()

	js2 := jobServer(t, db, dir, root)
	defer js2.Close()
	s2 := newServer(t, db, root, func(o *Options) { o.Jobs = js2 })
	cs2 := connect(t, s2, Caller{Admin: true})
	for id, want := range map[string]string{rid: "running", qid: "queued"} {
		m := waitState(t, cs2, id, "interrupted")
		if e, _ := m["error"].(string); !strings.Contains(e, "while the job was "+want) || !strings.Contains(e, "complete or absent") {
			t.Fatalf("interrupted job %v", m)
		}
	}
	waitState(t, cs2, id, "cancelled")
	waitState(t, cs2, tid, "timed_out")
}

// TestMCPJobToolsHTTP: over streamable HTTP (both revisions) the same
// principal with and without admin rights gets different tool lists, and
// only the admin's flush job runs.
func TestMCPJobToolsHTTP(t *testing.T) {
	root, db := fixture(t)
	js := jobServer(t, db, t.TempDir(), root)
	defer js.Close()
	s := newServer(t, db, root, func(o *Options) { o.Jobs = js })
	auth := func(r *http.Request) (Caller, bool) {
		tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		p := &contract.Principal{Name: "ops", Namespaces: []string{"*"}}
		return Caller{Principal: p, Admin: tok == "admin-key"}, ok
	}
	ts := httptest.NewServer(s.HTTPHandler(HTTPOptions{Authenticate: auth}))
	t.Cleanup(ts.Close)
	for _, version := range []string{StatefulRevision, StatelessRevision} {
		for _, key := range []string{"user-key", "admin-key"} {
			cs := httpSession(t, ts.URL, key, version)
			lt, err := cs.ListTools(context.Background(), nil)
			if err != nil {
				t.Fatal(err)
			}
			listed := false
			for _, tl := range lt.Tools {
				listed = listed || tl.Name == "job"
			}
			res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "job", Arguments: map[string]any{"kind": "flush"}})
			ran := err == nil && !res.IsError
			if listed != (key == "admin-key") || ran != (key == "admin-key") {
				t.Fatalf("%s %s: flush listed %v, ran %v (%v %+v)", version, key, listed, ran, err, res)
			}
			if ran {
				var r jobResult
				b, _ := json.Marshal(res.StructuredContent)
				json.Unmarshal(b, &r)
				waitState(t, cs, r.JobID, "completed")
			}
		}
	}
}

// TestMCPJobBadArguments: an admin's job call with arguments of the other
// mode or of another kind, or without what its kind needs, is a tool error
// with the validation-error shape naming the field; nothing is queued.
func TestMCPJobBadArguments(t *testing.T) {
	root, db := fixture(t)
	js := jobServer(t, db, t.TempDir(), root)
	defer js.Close()
	cj := &countingJobs{Jobs: js}
	s := newServer(t, db, root, func(o *Options) { o.Jobs = cj })
	cs := connect(t, s, Caller{Admin: true})
	id := strings.Repeat("0", 32)
	for _, tc := range []struct {
		args      map[string]any
		field     string
		errorType string
	}{
		{map[string]any{}, "kind", contract.ErrTypeMissing},
		{map[string]any{"kind": "rebuild"}, "kind", contract.ErrTypeUnknownValue},
		{map[string]any{"kind": "index"}, "path", contract.ErrTypeMissing},
		{map[string]any{"kind": "promote"}, "archive_id", contract.ErrTypeMissing},
		{map[string]any{"kind": "flush", "path": "sub"}, "path", contract.ErrTypeUnknownField},
		{map[string]any{"kind": "compact", "segments": []int{1}}, "segments", contract.ErrTypeUnknownField},
		{map[string]any{"kind": "flush", "cancel": true}, "cancel", contract.ErrTypeUnknownField},
		{map[string]any{"job_id": id, "kind": "flush"}, "kind", contract.ErrTypeUnknownField},
		{map[string]any{"job_id": id, "timeout_seconds": 5}, "timeout_seconds", contract.ErrTypeUnknownField},
		{map[string]any{"cancel": true}, "job_id", contract.ErrTypeInvalidFormat},
	} {
		res, m, _ := callTool(t, cs, "job", tc.args)
		errs, _ := m["errors"].([]any)
		if !res.IsError || m["status"] != "validation_error" || len(errs) != 1 {
			t.Errorf("job %v: %v", tc.args, m)
			continue
		}
		e := errs[0].(map[string]any)
		if loc, _ := e["loc"].([]any); len(loc) != 2 || loc[0] != "arguments" || loc[1] != tc.field || e["error_type"] != tc.errorType {
			t.Errorf("job %v: error %v, want %s at arguments.%s", tc.args, e, tc.errorType, tc.field)
		}
	}
	if cj.submitted != 0 {
		t.Errorf("%d jobs submitted by refused calls", cj.submitted)
	}
	if res, m, _ := callTool(t, cs, "job", map[string]any{"kind": "flush"}); res.IsError || cj.submitted != 1 {
		t.Fatalf("flush: %v (%d submitted)", m, cj.submitted)
	} else {
		waitState(t, cs, m["job_id"].(string), "completed")
	}
}

// countingJobs is the real job runner, counting submissions.
type countingJobs struct {
	Jobs
	submitted int
}

func (c *countingJobs) SubmitJob(req server.JobRequest, o server.JobOptions) (server.JobView, error) {
	c.submitted++
	return c.Jobs.SubmitJob(req, o)
}
