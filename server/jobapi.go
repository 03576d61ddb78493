package server

import (
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/stratasearch/strata/engine"
	"github.com/stratasearch/strata/engine/contract"
)

// The job API in Go, for embedders (package mcp's job tools): the same
// jobs, store and validation as POST /v1/jobs.

// JobOptions are a submission's runtime settings (not part of the request
// a client sends).
type JobOptions struct {
	// Timeout, when > 0, stops the job after this long: it ends
	// timed_out. Default none.
	Timeout time.Duration
}

// ErrJobQueueFull and ErrJobsClosed are SubmitJob's refusals.
var (
	ErrJobQueueFull = errQueueFull
	ErrJobsClosed   = errJobsClosed
)

// JobNotFoundError is SubmitJob's refusal of a request naming something
// that does not exist (a collection, a cold archive); it matches
// engine.ErrNotFound. Loc is the request field (rooted at "body") and
// Message is safe to show.
type JobNotFoundError struct {
	Loc     []any
	Message string
}

func (e *JobNotFoundError) Error() string   { return "server: job: " + e.Message }
func (e *JobNotFoundError) Is(t error) bool { return t == engine.ErrNotFound }

// SubmitJob validates and queues a job, as POST /v1/jobs does, and returns
// its view. Errors: a *contract.ValidationError or *RequestError for a bad
// request (unknown kind, collection, path or params), a *JobNotFoundError
// (matching engine.ErrNotFound) for a missing collection or cold archive,
// ErrJobQueueFull, ErrJobsClosed.
func (s *Server) SubmitJob(req JobRequest, o JobOptions) (JobView, error) {
	j, err := s.queueJob(req, o)
	if err != nil {
		var ae *apiError
		if errors.As(err, &ae) && ae.code == http.StatusNotFound && len(ae.errs) == 1 {
			return JobView{}, &JobNotFoundError{Loc: ae.errs[0].Loc, Message: ae.errs[0].Message}
		}
		return JobView{}, err
	}
	v, _ := s.jobs.get(j.id)
	return v, nil
}

// queueJob is SubmitJob with the HTTP error shapes.
func (s *Server) queueJob(req JobRequest, o JobOptions) (*job, error) {
	s.jobs.mu.Lock()
	mk, ok := s.jobs.kinds[req.Kind]
	s.jobs.mu.Unlock()
	if !ok {
		return nil, validation(contract.FieldError{Loc: []any{"body", "kind"}, InputValue: clip(req.Kind), ErrorType: contract.ErrTypeUnknownValue,
			Message: "unknown job kind", ExpectedDomain: strings.Join(s.jobs.kindNames(), " | ")})
	}
	run, err := mk(s.db, req)
	if err != nil {
		if errors.Is(err, engine.ErrNotFound) {
			return nil, newErr(http.StatusNotFound, StatusNotFound, "not_found", "no such collection", []any{"body", "collection"}, clip(req.Collection), "an existing collection")
		}
		return nil, err
	}
	return s.jobs.submit(req, run, o.Timeout)
}

// Job returns a job's view; ok is false for an id the store does not hold.
func (s *Server) Job(id string) (v JobView, ok bool) { return s.jobs.get(id) }

// CancelJob cancels a queued or running job and returns its view. ok is
// false for an unknown id; finished reports a job that had already ended
// (nothing was done).
func (s *Server) CancelJob(id string) (v JobView, ok, finished bool) { return s.jobs.cancelJob(id) }

// WatchJob calls f, on a goroutine of its own, with the job's view once it
// has finished (at once if it already has). ok is false for an unknown id.
func (s *Server) WatchJob(id string, f func(JobView)) (ok bool) { return s.jobs.watch(id, f) }

// JobKinds lists the registered job kinds.
func (s *Server) JobKinds() []string { return s.jobs.kindNames() }
