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

// The job tools: index, flush, compact, archive and promote queue a job on
// Options.Jobs (the server's durable job store) and return at once with
// its 128-bit id; job_status and job_cancel follow and stop it. They are
// listed and callable only for an admin caller (Caller.Admin) and only when
// Options.Jobs is set; every job works on Options.Collection, and index
// only on a directory under Options.Roots (after resolving symbolic links)
// that the job runner's own index roots also admit.
//
// Completion is pushed to the session that submitted the job: a
// notifications/message (logging) notification at level "notice", logger
// "strata.jobs", whose data is the job_status result, sent when the client
// has set a logging level (logging/setLevel) at or below notice; and, when
// the call carried a progress token, a notifications/progress with that
// token, progress = total = 1 and a message naming the job and its state.

// Jobs is the job runner the job tools submit to; *server.Server is one.
type Jobs interface {
	SubmitJob(req server.JobRequest, o server.JobOptions) (server.JobView, error)
	Job(id string) (server.JobView, bool)
	CancelJob(id string) (v server.JobView, ok, finished bool)
	WatchJob(id string, f func(server.JobView)) bool
}

const (
	timeoutProp = `"timeout_seconds":{"type":"integer","minimum":1,"maximum":86400,"description":"job time limit"}`
	noArgsIn    = `{"type":"object","additionalProperties":false,"properties":{` + timeoutProp + `}}`
	indexIn     = `{"type":"object","additionalProperties":false,"required":["path"],"properties":{` +
		`"path":{"type":"string","minLength":1,"maxLength":4096,"description":"directory under a root"},` + timeoutProp + `}}`
	archiveIn = `{"type":"object","additionalProperties":false,"properties":{` +
		`"segments":{"type":"array","maxItems":1024,"uniqueItems":true,"items":{"type":"integer","minimum":1},"description":"warm segment ids"},` +
		`"oldest":{"type":"integer","minimum":0,"maximum":1000000,"description":"else the N oldest (default 1)"},` +
		`"omit_vectors":{"type":"boolean"},"nlist":{"type":"integer","minimum":0,"maximum":65536},` + timeoutProp + `}}`
	promoteIn = `{"type":"object","additionalProperties":false,"required":["archive_id"],"properties":{` +
		`"archive_id":{"type":"integer","minimum":1,"description":"cold archive id"},` + timeoutProp + `}}`
	jobIDProp   = `"job_id":{"type":"string","pattern":"^[0-9a-f]{32}$"}`
	jobStatusIn = `{"type":"object","additionalProperties":false,"required":["job_id"],"properties":{` + jobIDProp +
		`,"log_lines":{"type":"integer","minimum":0,"maximum":50,"default":10}}}`
	jobCancelIn = `{"type":"object","additionalProperties":false,"required":["job_id"],"properties":{` + jobIDProp + `}}`
	jobOut      = `{"type":"object","properties":{"job_id":{"type":"string"},` +
		`"state":{"enum":["queued","running","completed","failed","cancelled","timed_out","interrupted"]},"progress":{"type":"number"}}}`
)

// registerJobTools registers the admin-only job tools.
func (s *Server) registerJobTools() {
	registerAdmin(s, "index", "Index a directory (incremental). Returns a job id at once.", indexIn, jobOut, runIndex)
	registerAdmin(s, "flush", "Flush the write-ahead log into a segment. Returns a job id.", noArgsIn, jobOut, runKind("flush"))
	registerAdmin(s, "compact", "Compact segments. Returns a job id.", noArgsIn, jobOut, runKind("compact"))
	registerAdmin(s, "archive", "Archive warm segments (cold tier). Returns a job id.", archiveIn, jobOut, runArchive)
	registerAdmin(s, "promote", "Promote a cold archive to a warm segment. Returns a job id.", promoteIn, jobOut, runPromote)
	registerAdmin(s, "job_status", "A job's state, progress and last log lines.", jobStatusIn, jobOut, runJobStatus)
	registerAdmin(s, "job_cancel", "Cancel a queued or running job.", jobCancelIn, jobOut, runJobCancel)
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

type timeoutArg struct {
	TimeoutSeconds *int `json:"timeout_seconds"`
}

func (a *timeoutArg) check() []contract.FieldError {
	if a.TimeoutSeconds != nil && (*a.TimeoutSeconds < 1 || *a.TimeoutSeconds > 86400) {
		return []contract.FieldError{{Loc: []any{"arguments", "timeout_seconds"}, InputValue: *a.TimeoutSeconds, ErrorType: contract.ErrTypeOutOfRange,
			Message: "timeout_seconds is out of range", ExpectedDomain: "1..86400 seconds"}}
	}
	return nil
}

func (a *timeoutArg) options() server.JobOptions {
	if a.TimeoutSeconds == nil {
		return server.JobOptions{}
	}
	return server.JobOptions{Timeout: time.Duration(*a.TimeoutSeconds) * time.Second}
}

type noArgs struct {
	TimeoutSeconds *int `json:"timeout_seconds"`
}

func (a *noArgs) validate(c *call) []contract.FieldError {
	return (&timeoutArg{a.TimeoutSeconds}).check()
}

type indexArgs struct {
	Path           string `json:"path"`
	TimeoutSeconds *int   `json:"timeout_seconds"`
}

func (a *indexArgs) validate(c *call) []contract.FieldError {
	return append(checkText([]any{"arguments", "path"}, a.Path, 1, 4096), (&timeoutArg{a.TimeoutSeconds}).check()...)
}

type archiveArgs struct {
	Segments       []uint64 `json:"segments"`
	Oldest         int      `json:"oldest"`
	OmitVectors    bool     `json:"omit_vectors"`
	Nlist          int      `json:"nlist"`
	TimeoutSeconds *int     `json:"timeout_seconds"`
}

func (a *archiveArgs) validate(c *call) []contract.FieldError {
	var fes []contract.FieldError
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
	if a.Oldest < 0 || a.Oldest > 1000000 {
		fes = append(fes, contract.FieldError{Loc: []any{"arguments", "oldest"}, InputValue: a.Oldest, ErrorType: contract.ErrTypeOutOfRange,
			Message: "oldest is out of range", ExpectedDomain: "0 (the default, 1) to 1000000"})
	}
	if a.Nlist < 0 || a.Nlist > 65536 {
		fes = append(fes, contract.FieldError{Loc: []any{"arguments", "nlist"}, InputValue: a.Nlist, ErrorType: contract.ErrTypeOutOfRange,
			Message: "nlist is out of range", ExpectedDomain: "0 (the default) or 1..65536"})
	}
	return append(fes, (&timeoutArg{a.TimeoutSeconds}).check()...)
}

type promoteArgs struct {
	ArchiveID      uint64 `json:"archive_id"`
	TimeoutSeconds *int   `json:"timeout_seconds"`
}

func (a *promoteArgs) validate(c *call) []contract.FieldError {
	fes := (&timeoutArg{a.TimeoutSeconds}).check()
	if a.ArchiveID == 0 {
		fes = append(fes, contract.FieldError{Loc: []any{"arguments", "archive_id"}, InputValue: a.ArchiveID, ErrorType: contract.ErrTypeMissing,
			Message: "archive_id is required (a cold archive id ≥ 1)", ExpectedDomain: "the id of one of the collection's cold archives"})
	}
	return fes
}

var jobIDRE = regexp.MustCompile(`^[0-9a-f]{32}$`)

func checkJobID(id string) []contract.FieldError {
	if !jobIDRE.MatchString(id) {
		return []contract.FieldError{{Loc: []any{"arguments", "job_id"}, InputValue: clip(id), ErrorType: contract.ErrTypeInvalidFormat,
			Message: "job_id is 32 lowercase hex digits", ExpectedDomain: "a job_id an earlier job tool returned"}}
	}
	return nil
}

type jobStatusArgs struct {
	JobID    string `json:"job_id"`
	LogLines *int   `json:"log_lines"`
}

func (a *jobStatusArgs) validate(c *call) []contract.FieldError {
	fes := checkJobID(a.JobID)
	if a.LogLines != nil && (*a.LogLines < 0 || *a.LogLines > 50) {
		fes = append(fes, contract.FieldError{Loc: []any{"arguments", "log_lines"}, InputValue: *a.LogLines, ErrorType: contract.ErrTypeOutOfRange,
			Message: "log_lines is out of range", ExpectedDomain: "0..50"})
	}
	return fes
}

type jobCancelArgs struct {
	JobID string `json:"job_id"`
}

func (a *jobCancelArgs) validate(c *call) []contract.FieldError { return checkJobID(a.JobID) }

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

func runIndex(ctx context.Context, c *call, a *indexArgs) (jobResult, string, error) {
	if _, err := c.jobs(); err != nil {
		return jobResult{}, "", err
	}
	p, err := c.indexPath(a.Path)
	if err != nil {
		return jobResult{}, "", err
	}
	return c.submit(server.JobRequest{Kind: "index", Path: p}, (&timeoutArg{a.TimeoutSeconds}).options())
}

func runKind(kind string) func(ctx context.Context, c *call, a *noArgs) (jobResult, string, error) {
	return func(ctx context.Context, c *call, a *noArgs) (jobResult, string, error) {
		return c.submit(server.JobRequest{Kind: kind}, (&timeoutArg{a.TimeoutSeconds}).options())
	}
}

func runArchive(ctx context.Context, c *call, a *archiveArgs) (jobResult, string, error) {
	params, _ := json.Marshal(server.ArchiveParams{Segments: a.Segments, Oldest: a.Oldest, OmitVectors: a.OmitVectors, Nlist: a.Nlist})
	return c.submit(server.JobRequest{Kind: "archive", Params: params}, (&timeoutArg{a.TimeoutSeconds}).options())
}

func runPromote(ctx context.Context, c *call, a *promoteArgs) (jobResult, string, error) {
	params, _ := json.Marshal(server.PromoteParams{ArchiveID: a.ArchiveID})
	return c.submit(server.JobRequest{Kind: "promote", Params: params}, (&timeoutArg{a.TimeoutSeconds}).options())
}

func runJobStatus(ctx context.Context, c *call, a *jobStatusArgs) (jobResult, string, error) {
	jobs, err := c.jobs()
	if err != nil {
		return jobResult{}, "", err
	}
	v, ok := jobs.Job(a.JobID)
	if !ok {
		return jobResult{}, "", &shapedError{body: failure("not_found", "no such job", "a job_id an earlier job tool returned (the last 1000 jobs are kept)")}
	}
	n := defaultJobLogLines
	if a.LogLines != nil {
		n = *a.LogLines
	}
	r := resultOf(v, n)
	return r, jobText(r), nil
}

func runJobCancel(ctx context.Context, c *call, a *jobCancelArgs) (jobResult, string, error) {
	jobs, err := c.jobs()
	if err != nil {
		return jobResult{}, "", err
	}
	v, ok, finished := jobs.CancelJob(a.JobID)
	if !ok {
		return jobResult{}, "", &shapedError{body: failure("not_found", "no such job", "a job_id an earlier job tool returned")}
	}
	if finished {
		return jobResult{}, "", &shapedError{body: failure("conflict", "the job has already finished ("+jobState(v.State)+")", "a queued or running job")}
	}
	r := resultOf(v, defaultJobLogLines)
	return r, jobText(r), nil
}
