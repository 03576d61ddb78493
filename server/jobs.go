package server

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/stratasearch/strata/engine"
	"github.com/stratasearch/strata/engine/contract"
)

// Jobs.
//
// POST /v1/jobs {"kind":K,"collection":C,"path":P,"params":{…}} queues a job
// and answers 202 with its view; GET /v1/jobs/{id} follows it; POST
// /v1/jobs/{id}/cancel cancels it. A job runs on one worker goroutine, in
// submission order (flush, compaction and indexing are I/O and CPU heavy;
// running them one at a time keeps searches responsive). States: queued →
// running → done | failed | cancelled | timed_out (a queued job cancelled
// never runs; timed_out needs a timeout, SubmitJob's JobOptions). Progress
// is a fraction in [0,1] set by the job; the view carries the last 50 log
// lines.
//
// Jobs are durable: every state change and log line is written to the job
// store (jobstore.go, DataDir/server/jobs/) and the last Options.JobHistory
// jobs are read back when the server starts. A job that was queued or
// running when the server stopped (crashed, or shut down: Close) reads as
// interrupted, with the reason in its error. Its effect is complete or
// absent: flush, compact, archive and promote commit one atomic manifest
// edit of the tier. An index job is neither: the chunks it upserted
// before the stop stay (each batch is its own engine write), but the
// ingest manifest is rewritten only at the end of a successful pass, so
// running the job again re-reads those files and rewrites the same chunk
// ids (idempotently), and then the tree is complete.
//
// A job kind is a JobMaker: it validates the request and returns the
// JobFunc to run. Built in: "flush", "compact" (CollectionJob over
// engine.Collection.Flush / Compact) and "index" (a directory under
// Options.IndexRoots into a collection, via ingest). Registering a
// further kind is one statement (CollectionJob, or CollectionJobParams
// for kinds with params), e.g.
//
//	srv.RegisterJobKind("archive", server.CollectionJobParams(func(ctx context.Context, c *engine.Collection, p *server.Progress, o struct {
//		Oldest int `json:"oldest"`
//	}) error {
//		_, err := c.Archive(ctx, engine.ArchiveOptions{Oldest: o.Oldest})
//		return err
//	}))

// JobState is a job's lifecycle state.
type JobState string

// Job states.
const (
	JobQueued    JobState = "queued"
	JobRunning   JobState = "running"
	JobDone      JobState = "done"
	JobFailed    JobState = "failed"
	JobCancelled JobState = "cancelled"
	// JobTimedOut is a job stopped by its timeout (JobOptions.Timeout).
	JobTimedOut JobState = "timed_out"
	// JobInterrupted is a job that was queued or running when the server
	// stopped.
	JobInterrupted JobState = "interrupted"
)

// finished reports whether st is a final state.
func (st JobState) finished() bool { return st != JobQueued && st != JobRunning }

// JobRequest is the body of POST /v1/jobs (closed schema).
type JobRequest struct {
	// Kind names a registered job kind: flush, compact, index, ….
	Kind string `json:"kind"`
	// Collection is the collection the job works on.
	Collection string `json:"collection,omitempty"`
	// Path is the directory of an index job (absolute, clean, under an
	// index root).
	Path string `json:"path,omitempty"`
	// Params are kind-specific options (decoded by the kind's JobMaker).
	Params json.RawMessage `json:"params,omitempty"`
}

// JobFunc runs a job. It must return soon after ctx is cancelled.
type JobFunc func(ctx context.Context, p *Progress) error

// JobMaker validates a request for one kind and returns the function to
// run. A *contract.ValidationError or *RequestError it returns becomes a 400
// (engine.ErrNotFound a 404) and no job is created.
type JobMaker func(db *engine.DB, req JobRequest) (JobFunc, error)

// RequestError is a JobMaker's complaint about one field of the request.
type RequestError struct {
	Field   string // "collection", "path", "params", …
	Message string
}

func (e *RequestError) Error() string { return "server: job " + e.Field + ": " + e.Message }

// CollectionJob makes a JobMaker for an operation on the request's
// collection (required; 404 when missing). Progress is set to 1 when run
// returns nil.
func CollectionJob(run func(ctx context.Context, c *engine.Collection, p *Progress) error) JobMaker {
	return func(db *engine.DB, req JobRequest) (JobFunc, error) {
		if req.Collection == "" {
			return nil, &RequestError{Field: "collection", Message: "collection is required"}
		}
		if len(req.Params) > 0 && string(req.Params) != "{}" && string(req.Params) != "null" {
			return nil, &RequestError{Field: "params", Message: "this job kind takes no params"}
		}
		col, err := db.Collection(req.Collection)
		if err != nil {
			return nil, err
		}
		return func(ctx context.Context, p *Progress) error {
			if err := run(ctx, col, p); err != nil {
				return err
			}
			p.Set(1)
			return nil
		}, nil
	}
}

// CollectionJobParams is CollectionJob for kinds that take params: the
// request's "params" object is decoded into a P under the closed-schema
// rules (unknown fields are a 400 with locs rooted at "params"; absent
// params leave P zero) before the job is queued. E.g.
//
//	srv.RegisterJobKind("promote", server.CollectionJobParams(
//		func(ctx context.Context, c *engine.Collection, p *server.Progress, a struct {
//			ArchiveID uint64 `json:"archive_id"`
//		}) error {
//			_, err := c.Promote(ctx, a.ArchiveID, func(done, total int) { p.Set(float64(done) / float64(max(total, 1))) })
//			return err
//		}))
//
// paramsValidator is implemented by job params that are checked at
// submission (CollectionJobParams): every problem, with locs rooted at
// ["body","params"], so that a job that cannot run is a 400, not a 202
// that fails later.
type paramsValidator interface {
	validate() []contract.FieldError
}

func CollectionJobParams[P any](run func(ctx context.Context, c *engine.Collection, p *Progress, params P) error) JobMaker {
	return func(db *engine.DB, req JobRequest) (JobFunc, error) {
		if req.Collection == "" {
			return nil, &RequestError{Field: "collection", Message: "collection is required"}
		}
		var params P
		if len(req.Params) > 0 && string(req.Params) != "null" {
			if err := contract.Decode(bytes.NewReader(req.Params), "params", &params); err != nil {
				return nil, err
			}
		}
		if v, ok := any(&params).(paramsValidator); ok {
			if fes := v.validate(); len(fes) > 0 {
				return nil, validation(fes...)
			}
		}
		col, err := db.Collection(req.Collection)
		if err != nil {
			return nil, err
		}
		return func(ctx context.Context, p *Progress) error {
			if err := run(ctx, col, p, params); err != nil {
				return err
			}
			p.Set(1)
			return nil
		}, nil
	}
}

// Progress is a running job's progress and log; safe for concurrent use.
type Progress struct {
	mu       sync.Mutex
	fraction float64
	log      []string
	onLog    func() // persists the job after a log line (set by the runner)
}

const jobLogTail = 50

// Set records the fraction done, clamped to [0,1].
func (p *Progress) Set(f float64) {
	if f != f || f < 0 {
		f = 0
	}
	p.mu.Lock()
	p.fraction = min(f, 1)
	p.mu.Unlock()
}

// Logf appends a line to the job's log (the last 50 lines are kept).
func (p *Progress) Logf(format string, args ...any) {
	p.logf(format, args...)
	p.mu.Lock()
	hook := p.onLog
	p.mu.Unlock()
	if hook != nil {
		hook()
	}
}

// logf is Logf without persisting (for the runner, which persists itself).
func (p *Progress) logf(format string, args ...any) {
	line := time.Now().UTC().Format(time.RFC3339) + " " + fmt.Sprintf(format, args...)
	p.mu.Lock()
	p.log = append(p.log, line)
	if len(p.log) > jobLogTail {
		p.log = append(p.log[:0:0], p.log[len(p.log)-jobLogTail:]...)
	}
	p.mu.Unlock()
}

type job struct {
	id     string
	req    JobRequest
	run    JobFunc
	prog   Progress
	cancel context.CancelFunc
	// timeout, when > 0, bounds the job's run (JobTimedOut beyond).
	timeout time.Duration

	// guarded by jobRunner.mu
	state                      JobState
	created, started, finished time.Time
	err                        string
	cancelAsked                bool
	watchers                   []func(JobView)
}

// JobView is the JSON form of a job.
type JobView struct {
	ID         string     `json:"id"`
	Kind       string     `json:"kind"`
	Collection string     `json:"collection,omitempty"`
	Path       string     `json:"path,omitempty"`
	State      JobState   `json:"state"`
	Progress   float64    `json:"progress"`
	Created    time.Time  `json:"created"`
	Started    *time.Time `json:"started,omitempty"`
	Finished   *time.Time `json:"finished,omitempty"`
	Error      string     `json:"error,omitempty"`
	Log        []string   `json:"log"`
}

type jobRunner struct {
	db      *engine.DB
	history int
	onEnd   func(kind string, st JobState)
	store   *jobStore
	log     *slog.Logger

	mu     sync.Mutex
	kinds  map[string]JobMaker
	jobs   map[string]*job
	order  []string // finished and live job ids, oldest first
	queue  chan *job
	ctx    context.Context
	stop   context.CancelFunc
	done   chan struct{}
	closed bool
}

// newJobRunner starts the runner over the job store st (nil: jobs live in
// memory only), reading back the jobs st holds: a queued or running one
// becomes interrupted.
func newJobRunner(db *engine.DB, history int, onEnd func(string, JobState), st *jobStore, logger *slog.Logger) *jobRunner {
	ctx, stop := context.WithCancel(context.Background())
	if logger == nil {
		logger = slog.Default()
	}
	jr := &jobRunner{db: db, history: history, onEnd: onEnd, store: st, log: logger, kinds: map[string]JobMaker{},
		jobs: map[string]*job{}, queue: make(chan *job, 4096), ctx: ctx, stop: stop, done: make(chan struct{})}
	if st != nil {
		recs, errs := st.load()
		for _, err := range errs {
			logger.Error("server: skipping a job record", "err", err)
		}
		jr.mu.Lock()
		for _, r := range recs {
			j := &job{id: r.ID, req: JobRequest{Kind: r.Kind, Collection: r.Coll, Path: r.Path, Params: r.Params},
				state: r.State, created: r.Created, started: r.Started, finished: r.Finished, err: r.Error, timeout: r.Timeout}
			j.prog.fraction, j.prog.log = r.Progress, r.Log
			jr.jobs[j.id] = j
			jr.order = append(jr.order, j.id)
			if !j.state.finished() {
				was := j.state
				j.state = JobInterrupted
				j.finished = time.Now().UTC()
				j.err = "the server stopped while the job was " + string(was) + "; " + interruptedEffect(j.req.Kind)
				j.prog.logf("%s: %s", JobInterrupted, j.err)
				jr.persistLocked(j)
			}
		}
		jr.trimLocked()
		jr.mu.Unlock()
	}
	go jr.worker()
	return jr
}

// interruptedEffect says what an interrupted job of kind left behind.
func interruptedEffect(kind string) string {
	switch kind {
	case "flush", "compact", "archive", "promote":
		return "its effect is complete or absent (one atomic manifest edit); check the collection's stats and run it again if absent"
	case "index":
		return "indexing is incremental, not atomic: chunks written before the stop stay, the ingest manifest is unchanged; run the job again to finish (it rewrites the same chunk ids)"
	}
	return "run the job again if its effect is absent"
}

// persistLocked writes j's record (best effort: a failure is logged; the
// job goes on in memory).
func (jr *jobRunner) persistLocked(j *job) {
	if jr.store == nil {
		return
	}
	v := jr.viewLocked(j)
	r := &jobRecord{ID: j.id, Kind: j.req.Kind, Coll: j.req.Collection, Path: j.req.Path, Params: j.req.Params,
		State: j.state, Progress: v.Progress, Log: v.Log, Created: j.created, Started: j.started, Finished: j.finished,
		Error: j.err, Timeout: j.timeout}
	if err := jr.store.put(r); err != nil {
		jr.log.Error("server: writing a job record failed", "job", j.id, "err", err)
	}
}

func (jr *jobRunner) register(kind string, m JobMaker) {
	jr.mu.Lock()
	jr.kinds[kind] = m
	jr.mu.Unlock()
}

func (jr *jobRunner) kindNames() []string {
	jr.mu.Lock()
	defer jr.mu.Unlock()
	names := make([]string, 0, len(jr.kinds))
	for k := range jr.kinds {
		names = append(names, k)
	}
	return sortedStrings(names)
}

var errJobsClosed = errors.New("server: job runner closed")
var errQueueFull = errors.New("server: job queue full")

// submit creates and queues a job.
func (jr *jobRunner) submit(req JobRequest, run JobFunc, timeout time.Duration) (*job, error) {
	var idb [16]byte
	_, _ = rand.Read(idb[:])
	j := &job{id: hex.EncodeToString(idb[:]), req: req, run: run, state: JobQueued, created: time.Now().UTC(), timeout: timeout}
	j.prog.onLog = func() {
		jr.mu.Lock()
		jr.persistLocked(j)
		jr.mu.Unlock()
	}
	jr.mu.Lock()
	defer jr.mu.Unlock()
	if jr.closed {
		return nil, errJobsClosed
	}
	select {
	case jr.queue <- j:
	default:
		return nil, errQueueFull
	}
	jr.jobs[j.id] = j
	jr.order = append(jr.order, j.id)
	jr.persistLocked(j)
	jr.trimLocked()
	return j, nil
}

// trimLocked forgets the oldest finished jobs beyond the history size.
func (jr *jobRunner) trimLocked() {
	for len(jr.order) > jr.history {
		dropped := false
		for i, id := range jr.order {
			j := jr.jobs[id]
			if j.state.finished() {
				if jr.store != nil {
					if err := jr.store.remove(id); err != nil {
						jr.log.Error("server: removing a job record failed", "job", id, "err", err)
					}
				}
				delete(jr.jobs, id)
				jr.order = append(jr.order[:i], jr.order[i+1:]...)
				dropped = true
				break
			}
		}
		if !dropped {
			return
		}
	}
}

func (jr *jobRunner) worker() {
	defer close(jr.done)
	for {
		select {
		case <-jr.ctx.Done():
			jr.drain()
			return
		case j := <-jr.queue:
			jr.runOne(j)
		}
	}
}

// drain marks queued jobs interrupted at shutdown.
func (jr *jobRunner) drain() {
	for {
		select {
		case j := <-jr.queue:
			jr.mu.Lock()
			if j.state == JobQueued {
				jr.endLocked(j, JobInterrupted, "the server shut down while the job was queued; "+interruptedEffect(j.req.Kind))
			}
			jr.mu.Unlock()
		default:
			return
		}
	}
}

func (jr *jobRunner) runOne(j *job) {
	jr.mu.Lock()
	if j.state != JobQueued { // cancelled while queued
		jr.mu.Unlock()
		return
	}
	if jr.ctx.Err() != nil { // shutting down: a queued job never starts
		jr.endLocked(j, JobInterrupted, "the server shut down while the job was queued; "+interruptedEffect(j.req.Kind))
		jr.mu.Unlock()
		return
	}
	ctx, cancel := context.WithCancel(jr.ctx)
	if j.timeout > 0 {
		var cancelT context.CancelFunc
		ctx, cancelT = context.WithTimeout(ctx, j.timeout)
		cancelAll := cancel
		cancel = func() { cancelT(); cancelAll() }
	}
	j.cancel = cancel
	j.state = JobRunning
	j.started = time.Now().UTC()
	jr.persistLocked(j)
	jr.mu.Unlock()

	err := safeRun(ctx, j)
	cancel()

	jr.mu.Lock()
	defer jr.mu.Unlock()
	switch {
	case err == nil:
		jr.endLocked(j, JobDone, "")
	case ctx.Err() != nil && j.cancelAsked:
		jr.endLocked(j, JobCancelled, err.Error())
	case ctx.Err() != nil && jr.ctx.Err() != nil:
		jr.endLocked(j, JobInterrupted, "the server shut down while the job was running; "+interruptedEffect(j.req.Kind))
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		jr.endLocked(j, JobTimedOut, fmt.Sprintf("the job's timeout (%v) passed", j.timeout))
	default:
		jr.endLocked(j, JobFailed, err.Error())
	}
}

func safeRun(ctx context.Context, j *job) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("server: job panicked: %v", r)
		}
	}()
	return j.run(ctx, &j.prog)
}

func (jr *jobRunner) endLocked(j *job, st JobState, msg string) {
	j.state = st
	j.finished = time.Now().UTC()
	j.err = msg
	if msg != "" {
		j.prog.logf("%s: %s", st, msg)
	} else {
		j.prog.logf("%s", st)
	}
	jr.persistLocked(j)
	if jr.onEnd != nil {
		jr.onEnd(j.req.Kind, st)
	}
	if len(j.watchers) > 0 {
		v := jr.viewLocked(j)
		for _, w := range j.watchers {
			go w(v)
		}
		j.watchers = nil
	}
}

// watch calls f (on its own goroutine) with the job's final view once it
// has finished, at once when it already has. ok is false for an unknown id.
func (jr *jobRunner) watch(id string, f func(JobView)) bool {
	jr.mu.Lock()
	defer jr.mu.Unlock()
	j, ok := jr.jobs[id]
	if !ok {
		return false
	}
	if j.state.finished() {
		go f(jr.viewLocked(j))
		return true
	}
	j.watchers = append(j.watchers, f)
	return true
}

// get returns a job's view.
func (jr *jobRunner) get(id string) (JobView, bool) {
	jr.mu.Lock()
	defer jr.mu.Unlock()
	j, ok := jr.jobs[id]
	if !ok {
		return JobView{}, false
	}
	return jr.viewLocked(j), true
}

// list returns every remembered job, oldest first.
func (jr *jobRunner) list() []JobView {
	jr.mu.Lock()
	defer jr.mu.Unlock()
	out := make([]JobView, 0, len(jr.order))
	for _, id := range jr.order {
		out = append(out, jr.viewLocked(jr.jobs[id]))
	}
	return out
}

func (jr *jobRunner) viewLocked(j *job) JobView {
	v := JobView{ID: j.id, Kind: j.req.Kind, Collection: j.req.Collection, Path: j.req.Path,
		State: j.state, Created: j.created, Error: j.err}
	if !j.started.IsZero() {
		t := j.started
		v.Started = &t
	}
	if !j.finished.IsZero() {
		t := j.finished
		v.Finished = &t
	}
	j.prog.mu.Lock()
	v.Progress = j.prog.fraction
	v.Log = append([]string{}, j.prog.log...)
	j.prog.mu.Unlock()
	return v
}

// cancelJob cancels a queued or running job. ok is false for an unknown
// id; finished reports a job that had already ended.
func (jr *jobRunner) cancelJob(id string) (v JobView, ok, finished bool) {
	jr.mu.Lock()
	defer jr.mu.Unlock()
	j, ok := jr.jobs[id]
	if !ok {
		return JobView{}, false, false
	}
	switch j.state {
	case JobQueued:
		j.cancelAsked = true
		jr.endLocked(j, JobCancelled, "cancelled before it started")
	case JobRunning:
		j.cancelAsked = true
		j.prog.logf("cancel requested")
		jr.persistLocked(j)
		j.cancel()
	default:
		return jr.viewLocked(j), true, true
	}
	return jr.viewLocked(j), true, false
}

// counts returns the number of jobs per state.
func (jr *jobRunner) counts() map[JobState]int {
	jr.mu.Lock()
	defer jr.mu.Unlock()
	m := map[JobState]int{}
	for _, j := range jr.jobs {
		m[j.state]++
	}
	return m
}

// close cancels every job and waits for the worker.
func (jr *jobRunner) close() {
	jr.mu.Lock()
	jr.closed = true
	jr.mu.Unlock()
	jr.stop()
	<-jr.done
}
