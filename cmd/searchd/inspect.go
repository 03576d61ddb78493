package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/stratasearch/strata/engine/bm25"
	"github.com/stratasearch/strata/engine/hnsw"
	"github.com/stratasearch/strata/engine/ivfpq"
	"github.com/stratasearch/strata/engine/tier"
	"github.com/stratasearch/strata/engine/tier/wal"
	"github.com/stratasearch/strata/ingest"
	"github.com/stratasearch/strata/internal/inspect"
)

// runInspect implements `searchd inspect [--json] FILE|DIR...`: every
// Strata file named (or found under a directory, e.g. a --data store) is
// identified by its magic, or by its name for magic-less files (WAL
// segments wal-*.log, MANIFEST-*, CURRENT, LOCK, collection.json, ingest
// manifests), and its header, sections, checksums and problems are
// printed (aligned tables, or one JSON array with --json). The command
// fails (exit status 1) when any file has a problem: a checksum mismatch,
// a bad magic or version, a section out of bounds, a truncated file. A
// file named explicitly that is not a Strata file is an error; under a
// directory it is listed as skipped, except that a file named like a
// store file (seg-*.sst, cold-*.parquet) is a problem when its contents
// are not that format.
//
// Every store directory found under a directory argument (one holding
// CURRENT, MANIFEST-*, wal/ segments, or segment or archive files) is
// also checked as a whole by tier.Check, the validation the store's Open
// runs, without changing anything: a report of format "store" fails
// exactly when opening the store would be refused (a missing CURRENT
// beside data, a CURRENT naming a missing manifest, a damaged edit, a
// missing or damaged segment or archive, a WAL missing or damaging a
// record the manifest knows was synced), and lists as warnings what Open
// would repair (torn tails after the synced epoch, unreferenced files it
// quarantines or removes).
func runInspect(args []string) error {
	fl := flag.NewFlagSet("inspect", flag.ContinueOnError)
	asJSON := fl.Bool("json", false, "print a JSON array of reports instead of tables")
	fl.Usage = func() {
		fmt.Fprintln(fl.Output(), "usage: searchd inspect [--json] FILE|DIR...")
		fl.PrintDefaults()
	}
	paths, err := parseArgs(fl, args)
	if err != nil {
		return err
	}
	if len(paths) == 0 {
		fl.Usage()
		return errors.New("inspect: no file or directory given")
	}
	var infos []*inspect.Info
	for _, p := range paths {
		st, err := os.Stat(p)
		if err != nil {
			return fmt.Errorf("inspect: %w", err)
		}
		if !st.IsDir() {
			in, err := inspectPath(p)
			if err != nil {
				return fmt.Errorf("inspect: %w", err)
			}
			if in == nil {
				return fmt.Errorf("inspect: %s is not a Strata file", p)
			}
			infos = append(infos, in)
			continue
		}
		found, err := inspectTree(p)
		if err != nil {
			return fmt.Errorf("inspect: %w", err)
		}
		infos = append(infos, found...)
		infos = append(infos, checkStores(found)...)
	}
	checkWALDirs(infos)
	out := os.Stdout
	failed, skipped := 0, 0
	for _, in := range infos {
		if !in.OK() {
			failed++
		}
		if in.Format == formatUnknown {
			skipped++
		}
	}
	if *asJSON {
		if err := inspect.WriteJSON(out, infos); err != nil {
			return err
		}
	} else {
		for _, in := range infos {
			if err := inspect.WriteText(out, in); err != nil {
				return err
			}
			fmt.Fprintln(out)
		}
		fmt.Fprintf(out, "%d files: %d OK, %d with problems, %d skipped (not Strata files)\n",
			len(infos), len(infos)-failed-skipped, failed, skipped)
	}
	if failed > 0 {
		return fmt.Errorf("inspect: %d of %d files have problems", failed, len(infos))
	}
	return nil
}

// checkWALDirs applies the WAL's cross-segment rules to the segments of
// each WAL directory among infos; records up to the durable epoch of the
// manifest in the store directory above (when inspected too) may be
// missing.
func checkWALDirs(infos []*inspect.Info) {
	byDir := map[string][]*inspect.Info{}
	durable := map[string]uint64{}
	for _, in := range infos {
		switch in.Format {
		case "wal":
			d := filepath.Dir(in.Path)
			byDir[d] = append(byDir[d], in)
		case "MANIFEST":
			if v, ok := in.Field("durableEpoch"); ok {
				if e, ok := v.(uint64); ok {
					durable[filepath.Dir(in.Path)] = e
				}
			}
		}
	}
	for d, segs := range byDir {
		wal.CheckSegments(segs, durable[filepath.Dir(d)])
	}
}

// checkStores runs tier.Check on every store directory among the files of
// infos (found under a directory argument), one "store" Info each, in
// path order.
func checkStores(infos []*inspect.Info) []*inspect.Info {
	dirs := map[string]bool{}
	for _, in := range infos {
		base, dir := filepath.Base(in.Path), filepath.Dir(in.Path)
		switch {
		case filepath.Base(dir) == quarantineDirName:
			// Set aside by recovery; not part of the store.
		case base == "CURRENT", strings.HasPrefix(base, "MANIFEST-"), isStoreDataName(base):
			dirs[dir] = true
		case strings.HasPrefix(base, "wal-") && strings.HasSuffix(base, ".log") && filepath.Base(dir) == "wal":
			dirs[filepath.Dir(dir)] = true
		}
	}
	var sorted []string
	for d := range dirs {
		sorted = append(sorted, d)
	}
	sort.Strings(sorted)
	var out []*inspect.Info
	for _, d := range sorted {
		out = append(out, checkStore(d))
	}
	return out
}

// quarantineDirName is the store subdirectory where recovery sets files
// aside (engine/tier).
const quarantineDirName = "quarantine"

func isStoreDataName(base string) bool {
	return (strings.HasPrefix(base, "seg-") && strings.HasSuffix(base, ".sst")) ||
		(strings.HasPrefix(base, "cold-") && strings.HasSuffix(base, ".parquet"))
}

// checkStore checks one store directory with tier.Check. The vector
// dimension and metric come from the collection config beside it
// (../collection.json, the engine's layout) when there is one; otherwise
// tier.Check reads them from the store's files.
func checkStore(dir string) *inspect.Info {
	in := &inspect.Info{Path: dir, Format: "store"}
	o := tier.Options{Dir: dir}
	if b, err := os.ReadFile(filepath.Join(filepath.Dir(dir), "collection.json")); err == nil {
		var cfg struct {
			Options struct {
				Dim    int    `json:"dim"`
				Metric string `json:"metric"`
			} `json:"options"`
		}
		if json.Unmarshal(b, &cfg) == nil && cfg.Options.Dim > 0 {
			o.Dim = cfg.Options.Dim
			switch cfg.Options.Metric {
			case "l2":
				o.Metric = tier.L2
			case "ip":
				o.Metric = tier.IP
			default:
				o.Metric = tier.Cosine
			}
		}
	}
	r, err := tier.Check(o)
	if err != nil {
		off := int64(-1)
		var ce *wal.CorruptError
		if errors.As(err, &ce) {
			off = ce.Offset
		}
		in.Problemf(off, "the store would not open: %v", err)
		return in
	}
	in.Add("durableEpoch", r.DurableEpoch, -1)
	in.Add("syncedEpoch", r.SyncedEpoch, -1)
	in.Add("segments", r.Segments, -1)
	in.Add("archives", r.Archives, -1)
	in.Add("walRecords", r.WALRecords, -1)
	in.Add("lastEpoch", r.LastEpoch, -1)
	for _, w := range r.Warnings {
		in.Warnf(-1, "%s", w)
	}
	return in
}

// formatUnknown marks a file found under a directory that is not a Strata
// file.
const formatUnknown = "unknown"

// inspectTree inspects every regular file under dir, in path order.
func inspectTree(dir string) ([]*inspect.Info, error) {
	var paths []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type().IsRegular() {
			paths = append(paths, p)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	sort.Strings(paths)
	var infos []*inspect.Info
	for _, p := range paths {
		in, err := inspectPath(p)
		if err != nil {
			return nil, err
		}
		if in == nil {
			in = &inspect.Info{Path: p, Format: formatUnknown}
			if st, err := os.Stat(p); err == nil {
				in.Size = st.Size()
			}
			in.Warnf(-1, "not a Strata file; skipped")
		}
		infos = append(infos, in)
	}
	return infos, nil
}

// inspectPath identifies and inspects one file; nil, nil when it is not a
// Strata file.
func inspectPath(p string) (*inspect.Info, error) {
	b, err := os.ReadFile(p)
	if err != nil {
		return nil, err
	}
	if strings.HasPrefix(filepath.Base(p), "MANIFEST-") && !hasMagic(b) {
		// Also checks the segment files around it.
		return tier.InspectManifestFiles(p)
	}
	in, err := inspectBytes(filepath.Base(p), b)
	if in != nil {
		in.Path = p
	}
	return in, err
}

// magics maps a file's leading bytes to its inspector.
var magics = []struct {
	magic string
	fn    func([]byte) (*inspect.Info, error)
}{
	{"STRHNSW\x00", hnsw.Inspect},
	{"STRBM25\x00", bm25.Inspect},
	{"STRAIVPQ", ivfpq.Inspect},
	{"STRATSEG", tier.Inspect},
	{"PAR1", tier.InspectArchive},
}

func hasMagic(b []byte) bool {
	for _, m := range magics {
		if bytes.HasPrefix(b, []byte(m.magic)) {
			return true
		}
	}
	return false
}

// inspectBytes picks the inspector for a file by magic, else by base
// name; nil, nil when none applies.
func inspectBytes(name string, b []byte) (*inspect.Info, error) {
	for _, m := range magics {
		if bytes.HasPrefix(b, []byte(m.magic)) {
			return m.fn(b)
		}
	}
	switch {
	case strings.HasPrefix(name, "wal-") && strings.HasSuffix(name, ".log"):
		return wal.InspectNamed(name, b)
	case strings.HasPrefix(name, "MANIFEST-"):
		return tier.InspectManifest(b)
	case name == "CURRENT":
		return tier.InspectCurrent(b)
	case isStoreDataName(name):
		// Named like a segment or archive, but without its magic.
		in := &inspect.Info{Format: "STRATSEG", Size: int64(len(b))}
		if strings.HasPrefix(name, "cold-") {
			in.Format = "parquet"
		}
		in.Problemf(0, "named like a store %s file, but it does not start with its magic", in.Format)
		return in, nil
	case name == "LOCK":
		return &inspect.Info{Format: "LOCK", Size: int64(len(b))}, nil
	case name == "collection.json":
		return inspectJSON("collection.json", b), nil
	case strings.HasSuffix(name, ".manifest.json"):
		return inspectJSON("ingest-manifest", b), nil
	case strings.HasSuffix(name, ".manifest.json.journal"):
		return ingest.InspectJournal(b), nil
	}
	return nil, nil
}

// inspectJSON describes a JSON file with a top-level format_version
// (collection config, ingest manifest).
func inspectJSON(format string, b []byte) *inspect.Info {
	in := &inspect.Info{Format: format, Size: int64(len(b))}
	var v struct {
		FormatVersion *int            `json:"format_version"`
		Journal       uint64          `json:"journal"`
		Name          string          `json:"name"`
		Files         json.RawMessage `json:"files"`
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	if err := dec.Decode(&v); err != nil {
		var se *json.SyntaxError
		off := int64(0)
		if errors.As(err, &se) {
			off = se.Offset
		}
		in.Problemf(off, "malformed JSON: %v", err)
		return in
	}
	if _, err := dec.Token(); err != io.EOF {
		in.Problemf(dec.InputOffset(), "trailing data after the JSON value")
	}
	if v.FormatVersion == nil {
		in.Problemf(-1, "no format_version")
	} else {
		in.Version = *v.FormatVersion
		in.Add("format_version", *v.FormatVersion, -1)
	}
	if v.Journal != 0 {
		in.Add("journal", v.Journal, -1)
	}
	if v.Name != "" {
		in.Add("name", v.Name, -1)
	}
	if len(v.Files) > 0 {
		var files map[string]json.RawMessage
		if json.Unmarshal(v.Files, &files) == nil {
			in.Add("files", len(files), -1)
		}
	}
	return in
}
