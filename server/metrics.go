package server

import (
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/stratasearch/strata/engine"
)

// metrics are the server's Prometheus collectors, in a registry of their own
// (so several servers can live in one process, e.g. in tests). /metrics
// serves it in the Prometheus text format:
//
//	strata_http_requests_total{route,code}            counter
//	strata_http_request_duration_seconds{route,code}  histogram
//	strata_http_in_flight_requests                    gauge
//	strata_http_rejected_total{reason}                counter (concurrency, body_size)
//	strata_idempotency_replays_total                  counter
//	strata_jobs_total{kind,state}                     counter (finished jobs)
//	strata_jobs{state}                                gauge (remembered jobs)
//	strata_collection_epoch{collection}               gauge
//	strata_collection_live_docs{collection}           gauge
//	strata_collection_warm_segments{collection}       gauge
//	strata_write_slowdowns_total{collection}          counter (writes delayed by backpressure)
//	strata_write_stalls_total{collection}             counter (writes blocked at the stop bound)
//	strata_write_stall_seconds_total{collection}      counter
//	strata_store_read_only                            gauge (1 when DB.Err() != nil)
//	strata_collections_unavailable                    gauge (collections on disk that could not be opened)
//
// plus the Go runtime and process collectors. route is the matched
// ServeMux pattern ("POST /v1/collections/{name}/search"), or "unmatched".
type metrics struct {
	reg       *prometheus.Registry
	requests  *prometheus.CounterVec
	latency   *prometheus.HistogramVec
	inFlight  prometheus.Gauge
	rejected  *prometheus.CounterVec
	replays   prometheus.Counter
	jobsTotal *prometheus.CounterVec
}

func newMetrics(db *engine.DB, jobs func() map[JobState]int) *metrics {
	m := &metrics{reg: prometheus.NewRegistry()}
	m.requests = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "strata_http_requests_total", Help: "HTTP requests by route pattern and status code.",
	}, []string{"route", "code"})
	m.latency = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "strata_http_request_duration_seconds", Help: "HTTP request latency by route pattern and status code.",
		Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30},
	}, []string{"route", "code"})
	m.inFlight = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "strata_http_in_flight_requests", Help: "HTTP requests being served.",
	})
	m.rejected = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "strata_http_rejected_total", Help: "Requests rejected by a limit (concurrency → 429, body_size → 413).",
	}, []string{"reason"})
	m.replays = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "strata_idempotency_replays_total", Help: "Responses replayed from the idempotency store.",
	})
	m.jobsTotal = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "strata_jobs_total", Help: "Finished jobs by kind and final state.",
	}, []string{"kind", "state"})
	m.reg.MustRegister(m.requests, m.latency, m.inFlight, m.rejected, m.replays, m.jobsTotal,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		&dbCollector{db: db, jobs: jobs})
	return m
}

// dbCollector reports per-collection gauges at scrape time.
type dbCollector struct {
	db   *engine.DB
	jobs func() map[JobState]int
}

var (
	descEpoch    = prometheus.NewDesc("strata_collection_epoch", "Newest visible epoch of a collection.", []string{"collection"}, nil)
	descLive     = prometheus.NewDesc("strata_collection_live_docs", "Documents visible at the newest epoch.", []string{"collection"}, nil)
	descWarm     = prometheus.NewDesc("strata_collection_warm_segments", "Warm segments of a collection.", []string{"collection"}, nil)
	descSlow     = prometheus.NewDesc("strata_write_slowdowns_total", "Writes delayed by backpressure (warm segments or MemTable past the slowdown bound).", []string{"collection"}, nil)
	descStall    = prometheus.NewDesc("strata_write_stalls_total", "Writes blocked by backpressure at the stop bound.", []string{"collection"}, nil)
	descStallSec = prometheus.NewDesc("strata_write_stall_seconds_total", "Time writes spent blocked by backpressure.", []string{"collection"}, nil)
	descReadOnly = prometheus.NewDesc("strata_store_read_only", "1 when a collection store turned read-only after an I/O failure.", nil, nil)
	descJobs     = prometheus.NewDesc("strata_jobs", "Remembered jobs by state.", []string{"state"}, nil)
	descUnavail  = prometheus.NewDesc("strata_collections_unavailable", "Collections found on disk that could not be opened (corrupt config or store); the others serve.", nil, nil)
)

func (c *dbCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- descEpoch
	ch <- descLive
	ch <- descWarm
	ch <- descSlow
	ch <- descStall
	ch <- descStallSec
	ch <- descReadOnly
	ch <- descJobs
	ch <- descUnavail
}

func (c *dbCollector) Collect(ch chan<- prometheus.Metric) {
	for _, name := range c.db.Collections() {
		col, err := c.db.Collection(name)
		if err != nil {
			continue
		}
		st := col.Stats()
		ch <- prometheus.MustNewConstMetric(descEpoch, prometheus.GaugeValue, float64(st.Epoch), name)
		ch <- prometheus.MustNewConstMetric(descLive, prometheus.GaugeValue, float64(st.LiveDocs), name)
		ch <- prometheus.MustNewConstMetric(descWarm, prometheus.GaugeValue, float64(st.WarmSegments), name)
		ch <- prometheus.MustNewConstMetric(descSlow, prometheus.CounterValue, float64(st.Backpressure.Slowdowns), name)
		ch <- prometheus.MustNewConstMetric(descStall, prometheus.CounterValue, float64(st.Backpressure.Stalls), name)
		ch <- prometheus.MustNewConstMetric(descStallSec, prometheus.CounterValue, st.Backpressure.StallTime.Seconds(), name)
	}
	ro := 0.0
	if c.db.Err() != nil {
		ro = 1
	}
	ch <- prometheus.MustNewConstMetric(descReadOnly, prometheus.GaugeValue, ro)
	ch <- prometheus.MustNewConstMetric(descUnavail, prometheus.GaugeValue, float64(len(c.db.Unavailable())))
	counts := c.jobs()
	for _, st := range []JobState{JobQueued, JobRunning, JobDone, JobFailed, JobCancelled, JobTimedOut, JobInterrupted} {
		ch <- prometheus.MustNewConstMetric(descJobs, prometheus.GaugeValue, float64(counts[st]), string(st))
	}
}
