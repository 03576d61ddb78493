package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/stratasearch/strata/engine"
	"github.com/stratasearch/strata/engine/contract"
	"github.com/stratasearch/strata/server"
)

// The job tool: given a kind, job queues a job of that kind (index, flush,
// compact, archive, promote) on Options.Jobs (the server's durable job
// store) and returns at once with its 128-bit id; given that job_id, job
// follows it (state, progress, log) and, with cancel, stops it. It is
// listed and callable only for an admin caller (Caller.Admin) and only when
// Options.Jobs is set; every job works on Options.Collection, and index
// only on a directory under Options.Roots (after resolving symbolic links)
// that the job runner's own index roots also admit.
//
// Completion is pushed to the session that submitted the job: a
// notifications/message (logging) notification at level "notice", logger
// "strata.jobs", whose data is the job tool's result for the job, sent
// when the client has set a logging level (logging/setLevel) at or below
// notice; and, when the call carried a progress token, a
// notifications/progress with that token, progress = total = 1 and a
// message naming the job and its state.

// Jobs is the job runner the job tool submits to; *server.Server is one.
type Jobs interface {
	SubmitJob(req server.JobRequest, o server.JobOptions) (server.JobView, error)
	Job(id string) (server.JobView, bool)
	CancelJob(id string) (v server.JobView, ok, finished bool)
	WatchJob(id string, f func(server.JobView)) bool
}

const (
	jobIn = `{"type":"object","additionalProperties":false,"properties":{` +
		`"kind":{"enum":["index","flush","compact","archive","promote"]},` +
		`"job_id":{"type":"string","pattern":"^[0-9a-f]{32}$"},"cancel":{"type":"boolean"},` +
		`"log_lines":{"type":"integer","minimum":0,"maximum":50,"default":10},` +
		`"path":{"type":"string","minLength":1,"maxLength":4096,"description":"index: directory under a root"},` +
		`"archive_id":{"type":"integer","minimum":1,"description":"promote: cold archive id"},` +
		`"segments":{"type":"array","maxItems":1024,"uniqueItems":true,"items":{"type":"integer","minimum":1},"description":"archive: warm segment ids, else"},` +
		`"oldest":{"type":"integer","minimum":0,"maximum":1000000,"description":"the N oldest (default 1)"},` +
		`"omit_vectors":{"type":"boolean"},"nlist":{"type":"integer","minimum":0,"maximum":65536},` +
		`"timeout_seconds":{"type":"integer","minimum":1,"maximum":86400}}}`
	jobOut = `{"type":"object","properties":{"job_id":{"type":"string"},` +
		`"state":{"enum":["queued","running","completed","failed","cancelled","timed_out","interrupted"]}}}`
)

// registerJobTools registers the admin-only job tool.
func (s *Server) registerJobTools() {
	registerAdmin(s, "job", "kind: queue a job (index is incremental), returning its job_id at once. job_id: its state and log tail; cancel: true cancels it.", jobIn, jobOut, runJob)
}

// registerAdmin is register for a tool only admin callers see.
func registerAdmin[A any, PA interface {
	*A
	arguments
}, R any](s *Server, name, desc, inSchema, outSchema string, run func(ctx context.Context, c *call, a *A) (R, string, error)) {
	register[A, PA](s, name, desc, inSchema, outSchema, run)
	s.tools[len(s.tools)-1].admin = true
}

// jobResult is every job tool's structured result.
type jobResult struct {
	JobID    string     `json:"job_id"`
	Kind     string     `json:"kind"`
	State    string     `json:"state"`
	Progress float64    `json:"progress"`
	Log      []string   `json:"log"`
	Error    string     `json:"error,omitempty"`
	Created  time.Time  `json:"created"`
	Started  *time.Time `json:"started,omitempty"`
	Finished *time.Time `json:"finished,omitempty"`
}

// jobState names a server job state as the tools report it ("done" is
// "completed").
func jobState(st server.JobState) string {
	if st == server.JobDone {
		return "completed"
	}
	return string(st)
}

func resultOf(v server.JobView, logLines int) jobResult {
	log := v.Log
	if len(log) > logLines {
		log = log[len(log)-logLines:]
	}
	if log == nil {
		log = []string{}
	}
	return jobResult{JobID: v.ID, Kind: v.Kind, State: jobState(v.State), Progress: v.Progress, Log: log,
		Error: v.Error, Created: v.Created, Started: v.Started, Finished: v.Finished}
}

func jobText(r jobResult) string {
	t := fmt.Sprintf("job %s (%s): %s, progress %.0f%%", r.JobID, r.Kind, r.State, r.Progress*100)
	if r.Error != "" {
		t += ": " + r.Error
	}
	return t
}

const defaultJobLogLines = 10

// --- arguments ---

// jobArgs are job's arguments: kind starts a job, job_id follows one
// (exactly one of them). Starting, path is index's (required there),
// archive_id promote's (required there), segments, oldest, omit_vectors
// and nlist archive's, timeout_seconds any kind's; following, cancel
// cancels the job (queued or running) before reporting it and log_lines
// is the log tail's length. An argument of the other mode, or of another
// kind, is a validation error.
type jobArgs struct {
	Kind           string   `json:"kind"`
	JobID          string   `json:"job_id"`
	Cancel         *bool    `json:"cancel"`
	LogLines       *int     `json:"log_lines"`
	Path           *string  `json:"path"`
	ArchiveID      *uint64  `json:"archive_id"`
	Segments       []uint64 `json:"segments"`
	Oldest         *int     `json:"oldest"`
	OmitVectors    *bool    `json:"omit_vectors"`
	Nlist          *int     `json:"nlist"`
	TimeoutSeconds *int     `json:"timeout_seconds"`
}

// jobKindOf names the one kind each kind-specific argument belongs to.
var jobKindOf = []struct{ field, kind string }{
	{"path", "index"}, {"archive_id", "promote"},
	{"segments", "archive"}, {"oldest", "archive"}, {"omit_vectors", "archive"}, {"nlist", "archive"},
}

func (a *jobArgs) given(field string) bool {
	switch field {
	case "timeout_seconds":
		return a.TimeoutSeconds != nil
	case "cancel":
		return a.Cancel != nil
	case "log_lines":
		return a.LogLines != nil
	case "path":
		return a.Path != nil
	case "archive_id":
		return a.ArchiveID != nil
	case "segments":
		return a.Segments != nil
	case "oldest":
		return a.Oldest != nil
	case "omit_vectors":
		return a.OmitVectors != nil
	case "nlist":
		return a.Nlist != nil
	}
	return false
}

func (a *jobArgs) validate(c *call) []contract.FieldError {
	if a.JobID != "" || a.Kind == "" && (a.Cancel != nil || a.LogLines != nil) {
		return a.validateFollow()
	}
	var fes []contract.FieldError
	for _, f := range []string{"cancel", "log_lines"} {
		if a.given(f) {
			fes = append(fes, contract.FieldError{Loc: []any{"arguments", f}, InputValue: nil, ErrorType: contract.ErrTypeUnknownField,
				Message: f + " applies with job_id only", ExpectedDomain: "the arguments of starting a job (kind)"})
		}
	}
	switch a.Kind {
	case "index", "flush", "compact", "archive", "promote":
		for _, f := range jobKindOf {
			if a.given(f.field) && f.kind != a.Kind {
				fes = append(fes, contract.FieldError{Loc: []any{"arguments", f.field}, InputValue: nil, ErrorType: contract.ErrTypeUnknownField,
					Message: f.field + " applies to kind " + f.kind + " only", ExpectedDomain: "the arguments of kind " + a.Kind})
			}
		}
	case "":
		fes = append(fes, contract.FieldError{Loc: []any{"arguments", "kind"}, InputValue: nil, ErrorType: contract.ErrTypeMissing,
			Message: "kind (start a job) or job_id (follow one) is required", ExpectedDomain: jobKinds})
	default:
		fes = append(fes, contract.FieldError{Loc: []any{"arguments", "kind"}, InputValue: clip(a.Kind), ErrorType: contract.ErrTypeUnknownValue,
			Message: "unknown job kind", ExpectedDomain: jobKinds})
	}
	switch {
	case a.Path != nil:
		fes = append(fes, checkText([]any{"arguments", "path"}, *a.Path, 1, 4096)...)
	case a.Kind == "index":
		fes = append(fes, contract.FieldError{Loc: []any{"arguments", "path"}, InputValue: nil, ErrorType: contract.ErrTypeMissing,
			Message: "path is required for kind index", ExpectedDomain: "a directory under the server's roots"})
	}
	switch {
	case a.ArchiveID != nil && *a.ArchiveID == 0:
		fes = append(fes, contract.FieldError{Loc: []any{"arguments", "archive_id"}, InputValue: 0, ErrorType: contract.ErrTypeOutOfRange,
			Message: "archive ids start at 1", ExpectedDomain: "the id of one of the collection's cold archives"})
	case a.ArchiveID == nil && a.Kind == "promote":
		fes = append(fes, contract.FieldError{Loc: []any{"arguments", "archive_id"}, InputValue: nil, ErrorType: contract.ErrTypeMissing,
			Message: "archive_id is required for kind promote", ExpectedDomain: "the id of one of the collection's cold archives"})
	}
	if len(a.Segments) > 1024 {
		fes = append(fes, contract.FieldError{Loc: []any{"arguments", "segments"}, InputValue: len(a.Segments), ErrorType: contract.ErrTypeOutOfRange,
			Message: "too many segment ids", ExpectedDomain: "at most 1024"})
	}
	seen := map[uint64]bool{}
	for i, id := range a.Segments {
		if id == 0 {
			fes = append(fes, contract.FieldError{Loc: []any{"arguments", "segments", i}, InputValue: id, ErrorType: contract.ErrTypeOutOfRange,
				Message: "segment ids start at 1", ExpectedDomain: "a warm segment id ≥ 1"})
		} else if seen[id] {
			fes = append(fes, contract.FieldError{Loc: []any{"arguments", "segments", i}, InputValue: id, ErrorType: contract.ErrTypeDuplicate,
				Message: "segment id given twice", ExpectedDomain: "distinct warm segment ids"})
		}
		seen[id] = true
	}
	if a.Oldest != nil && (*a.Oldest < 0 || *a.Oldest > 1000000) {
		fes = append(fes, contract.FieldError{Loc: []any{"arguments", "oldest"}, InputValue: *a.Oldest, ErrorType: contract.ErrTypeOutOfRange,
			Message: "oldest is out of range", ExpectedDomain: "0 (the default, 1) to 1000000"})
	}
	if a.Nlist != nil && (*a.Nlist < 0 || *a.Nlist > 65536) {
		fes = append(fes, contract.FieldError{Loc: []any{"arguments", "nlist"}, InputValue: *a.Nlist, ErrorType: contract.ErrTypeOutOfRange,
			Message: "nlist is out of range", ExpectedDomain: "0 (the default) or 1..65536"})
	}
	if a.TimeoutSeconds != nil && (*a.TimeoutSeconds < 1 || *a.TimeoutSeconds > 86400) {
		fes = append(fes, contract.FieldError{Loc: []any{"arguments", "timeout_seconds"}, InputValue: *a.TimeoutSeconds, ErrorType: contract.ErrTypeOutOfRange,
			Message: "timeout_seconds is out of range", ExpectedDomain: "1..86400 seconds"})
	}
	return fes
}

const jobKinds = "index | flush | compact | archive | promote"

// validateFollow validates following a job: job_id, cancel, log_lines and
// nothing that starts one.
func (a *jobArgs) validateFollow() []contract.FieldError {
	fes := checkJobID(a.JobID)
	for _, f := range append([]string{"kind", "timeout_seconds"}, "path", "archive_id", "segments", "oldest", "omit_vectors", "nlist") {
		if f == "kind" && a.Kind != "" || f != "kind" && a.given(f) {
			fes = append(fes, contract.FieldError{Loc: []any{"arguments", f}, InputValue: nil, ErrorType: contract.ErrTypeUnknownField,
				Message: f + " applies to starting a job only", ExpectedDomain: "job_id, cancel, log_lines"})
		}
	}
	if a.LogLines != nil && (*a.LogLines < 0 || *a.LogLines > 50) {
		fes = append(fes, contract.FieldError{Loc: []any{"arguments", "log_lines"}, InputValue: *a.LogLines, ErrorType: contract.ErrTypeOutOfRange,
			Message: "log_lines is out of range", ExpectedDomain: "0..50"})
	}
	return fes
}

func (a *jobArgs) options() server.JobOptions {
	if a.TimeoutSeconds == nil {
		return server.JobOptions{}
	}
	return server.JobOptions{Timeout: time.Duration(*a.TimeoutSeconds) * time.Second}
}

var jobIDRE = regexp.MustCompile(`^[0-9a-f]{32}$`)

func checkJobID(id string) []contract.FieldError {
	if !jobIDRE.MatchString(id) {
		return []contract.FieldError{{Loc: []any{"arguments", "job_id"}, InputValue: clip(id), ErrorType: contract.ErrTypeInvalidFormat,
			Message: "job_id is 32 lowercase hex digits", ExpectedDomain: "a job_id an earlier job call returned"}}
	}
	return nil
}

// --- running ---

// errJobsUnavailable is a job tool called on a server without a job runner
// or by a caller that is not an admin (the tools are not listed then).
var errJobsUnavailable = errors.New("mcp: job tools unavailable")

// jobs returns the job runner when c may use it.
func (c *call) jobs() (Jobs, error) {
	if c.s.o.Jobs == nil || !c.caller.Admin {
		return nil, errJobsUnavailable
	}
	return c.s.o.Jobs, nil
}

// submit queues a job on the configured collection and arranges the
// completion notification.
func (c *call) submit(req server.JobRequest, o server.JobOptions) (jobResult, string, error) {
	jobs, err := c.jobs()
	if err != nil {
		return jobResult{}, "", err
	}
	req.Collection = c.s.o.Collection
	v, err := jobs.SubmitJob(req, o)
	if err != nil {
		return jobResult{}, "", submitError(err)
	}
	if c.req != nil && c.req.Session != nil {
		ss := c.req.Session
		var token any
		if c.req.Params != nil {
			token = c.req.Params.GetProgressToken()
		}
		jobs.WatchJob(v.ID, func(end server.JobView) { c.s.notifyJobEnd(ss, token, end) })
	}
	r := resultOf(v, defaultJobLogLines)
	return r, jobText(r), nil
}

// notifyJobEnd pushes a finished job to the session that submitted it.
func (s *Server) notifyJobEnd(ss *sdk.ServerSession, token any, v server.JobView) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	r := resultOf(v, defaultJobLogLines)
	if token != nil {
		_ = ss.NotifyProgress(ctx, &sdk.ProgressNotificationParams{ProgressToken: token, Progress: 1, Total: 1, Message: jobText(r)})
	}
	_ = ss.Log(ctx, &sdk.LoggingMessageParams{Level: "notice", Logger: "strata.jobs", Data: r})
}

// submitError maps the job runner's refusal to a tool error: validation
// problems keep their fields (rooted at "arguments"); nothing else shows
// the runner's text.
func submitError(err error) error {
	var ve *contract.ValidationError
	var re *server.RequestError
	var nf *server.JobNotFoundError
	switch {
	case errors.As(err, &ve):
		out := &contract.ValidationError{}
		for _, fe := range ve.Errors {
			loc := []any{"arguments"}
			// {"body","params",f,…} and {"body",f,…} → {"arguments",f,…}
			rest := fe.Loc
			if len(rest) > 0 && rest[0] == "body" {
				rest = rest[1:]
			}
			if len(rest) > 0 && rest[0] == "params" {
				rest = rest[1:]
			}
			fe.Loc = append(loc, rest...)
			out.Errors = append(out.Errors, fe)
		}
		return out
	case errors.As(err, &re):
		loc := []any{"arguments"}
		if re.Field == "path" {
			loc = append(loc, "path")
		}
		return &contract.ValidationError{Errors: []contract.FieldError{{Loc: loc, ErrorType: contract.ErrTypeInvalidFormat,
			Message: re.Message, ExpectedDomain: "see the tool's input schema"}}}
	case errors.As(err, &nf):
		return &shapedError{body: failure("not_found", nf.Message, "")}
	case errors.Is(err, engine.ErrNotFound):
		return &shapedError{body: failure("not_found", "not found", "")}
	case errors.Is(err, server.ErrJobQueueFull):
		return &shapedError{body: failure("unavailable", "the job queue is full; retry later", "")}
	case errors.Is(err, server.ErrJobsClosed):
		return &shapedError{body: failure("unavailable", "the server is shutting down", "")}
	}
	return err
}

// shapedError carries a ready error body.
type shapedError struct{ body errorBody }

func (e *shapedError) Error() string { return e.body.Errors[0].Message }

// indexPath resolves an index argument: absolute, or relative to the first
// root; lexically clean; and, symbolic links resolved, inside a root.
func (c *call) indexPath(p string) (string, error) {
	bad := func(msg string) error {
		return &contract.ValidationError{Errors: []contract.FieldError{{Loc: []any{"arguments", "path"}, InputValue: clip(p), ErrorType: contract.ErrTypeInvalidFormat,
			Message: msg, ExpectedDomain: "a directory under the server's roots"}}}
	}
	if len(c.s.roots) == 0 {
		return "", bad("the server has no roots configured")
	}
	full := p
	if !filepath.IsAbs(p) {
		full = filepath.Join(c.s.roots[0], p)
	}
	if filepath.Clean(full) != full && filepath.Clean(full)+string(filepath.Separator) != full {
		return "", bad("path must be clean (no \".\" or \"..\" segments)")
	}
	full = filepath.Clean(full)
	real, err := filepath.EvalSymlinks(full)
	if err != nil {
		return "", bad("no such directory")
	}
	for _, r := range c.s.roots {
		rr, err := filepath.EvalSymlinks(r)
		if err == nil && (real == rr || strings.HasPrefix(real, rr+string(filepath.Separator))) {
			if fi, err := os.Stat(real); err != nil || !fi.IsDir() {
				return "", bad("not a directory")
			}
			return real, nil
		}
	}
	return "", bad("path is outside every root")
}

// runJobStart queues a job of a valid kind with its arguments.
func runJobStart(ctx context.Context, c *call, a *jobArgs) (jobResult, string, error) {
	req := server.JobRequest{Kind: a.Kind}
	switch a.Kind {
	case "index":
		p, err := c.indexPath(*a.Path)
		if err != nil {
			return jobResult{}, "", err
		}
		req.Path = p
	case "archive":
		p := server.ArchiveParams{Segments: a.Segments}
		if a.Oldest != nil {
			p.Oldest = *a.Oldest
		}
		if a.OmitVectors != nil {
			p.OmitVectors = *a.OmitVectors
		}
		if a.Nlist != nil {
			p.Nlist = *a.Nlist
		}
		req.Params, _ = json.Marshal(p)
	case "promote":
		req.Params, _ = json.Marshal(server.PromoteParams{ArchiveID: *a.ArchiveID})
	}
	return c.submit(req, a.options())
}

// runJob starts a job (kind) or reports one (job_id), cancelling it
// first when asked: a job that has already finished is then a conflict.
func runJob(ctx context.Context, c *call, a *jobArgs) (jobResult, string, error) {
	jobs, err := c.jobs()
	if err != nil {
		return jobResult{}, "", err
	}
	if a.JobID == "" {
		return runJobStart(ctx, c, a)
	}
	n := defaultJobLogLines
	if a.LogLines != nil {
		n = *a.LogLines
	}
	if a.Cancel != nil && *a.Cancel {
		v, ok, finished := jobs.CancelJob(a.JobID)
		if !ok {
			return jobResult{}, "", &shapedError{body: failure("not_found", "no such job", "a job_id an earlier job call returned")}
		}
		if finished {
			return jobResult{}, "", &shapedError{body: failure("conflict", "the job has already finished ("+jobState(v.State)+")", "a queued or running job")}
		}
		r := resultOf(v, n)
		return r, jobText(r), nil
	}
	v, ok := jobs.Job(a.JobID)
	if !ok {
		return jobResult{}, "", &shapedError{body: failure("not_found", "no such job", "a job_id an earlier job call returned (the last 1000 jobs are kept)")}
	}
	r := resultOf(v, n)
	return r, jobText(r), nil
}
