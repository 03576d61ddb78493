package engine

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stratasearch/strata/engine/tier"
)

// TestOptionEnums: each typed option accepts exactly its declared
// constants, whose spelling is the one the config file has always held,
// and names the field and the allowed values when it refuses.
func TestOptionEnums(t *testing.T) {
	check := func(name string, validate func() error, ok bool, want string) {
		t.Helper()
		err := validate()
		if (err == nil) != ok {
			t.Errorf("%s: err = %v, want ok %v", name, err, ok)
		}
		if err != nil && !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %q does not contain %q", name, err, want)
		}
	}
	for _, v := range []SyncPolicy{SyncAlways, SyncInterval, SyncNone} {
		check(string(v), v.Validate, true, "")
		w, err := v.wal()
		if err != nil || w.String() != string(v) {
			t.Errorf("Sync %q maps to wal %v, %v", v, w, err)
		}
	}
	check("sync", SyncPolicy("Always").Validate, false, `Sync = "Always", want always, interval or none`)
	if _, err := SyncPolicy("Always").wal(); err == nil {
		t.Error(`Sync "Always" mapped to a wal policy`)
	}
	for _, v := range []StalePolicy{OnStaleDrop, OnStaleReread} {
		check(string(v), v.Validate, true, "")
	}
	check("stale", StalePolicy("keep").Validate, false, `OnStale = "keep", want drop or reread`)
	for _, v := range []Analyzer{AnalyzerCode, AnalyzerProse} {
		check(string(v), v.Validate, true, "")
	}
	check("analyzer", Analyzer("x").Validate, false, `Analyzer = "x", want code or prose`)
	for _, v := range []HybridStrategy{HybridRerankMaxNorm, HybridRRF} {
		check(string(v), v.Validate, true, "")
	}
	check("hybrid", HybridStrategy("").Validate, false, `HybridDefault = "", want rerank-maxnorm or rrf`)
	for _, v := range []RedactPolicy{RedactAuto, RedactAlways, RedactOff} {
		check(string(v), v.Validate, true, "")
	}
	check("redact", RedactPolicy("on").Validate, false, `Redact = "on", want auto, always or off`)
	for _, v := range []tier.SegmentIndexType{tier.SegmentIndexHNSW, tier.SegmentIndexIVFPQ} {
		check(string(v), v.Validate, true, "")
	}
	check("segment index", tier.SegmentIndexType("flat").Validate, false, `"flat" (want hnsw or ivfpq)`)
	for _, s := range []string{"l2", "ip", "cosine"} {
		m, err := parseMetric(s)
		if err != nil || m.String() != s {
			t.Errorf("parseMetric(%q) = %v, %v", s, m, err)
		}
	}
	for _, s := range []string{"L2", "Cosine", "", "dot"} {
		if _, err := parseMetric(s); err == nil {
			t.Errorf("parseMetric(%q) accepted (the config spelling is lower case)", s)
		}
	}

	// The JSON spelling of a config is unchanged.
	o := CollectionOptions{Dim: 4, Metric: "ip", Analyzer: AnalyzerProse, Sync: SyncNone, OnStale: OnStaleDrop,
		HybridDefault: HybridRRF, SegmentIndex: tier.SegmentIndexIVFPQ}
	b, err := json.Marshal(o)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"metric":"ip"`, `"analyzer":"prose"`, `"sync":"none"`, `"on_stale":"drop"`, `"hybrid_default":"rrf"`, `"segment_index":"ivfpq"`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("%s lacks %s", b, want)
		}
	}
	var back CollectionOptions
	if err := json.Unmarshal(b, &back); err != nil || back.Sync != SyncNone || back.SegmentIndex != tier.SegmentIndexIVFPQ || back.Analyzer != AnalyzerProse {
		t.Errorf("round trip %+v, %v", back, err)
	}
}
