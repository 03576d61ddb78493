package server

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/stratasearch/strata/internal/base"
	"github.com/stratasearch/strata/vfs"
)

// The job store: one file per job, DataDir/server/jobs/<id>.job, rewritten
// atomically (vfs.WriteFileAtomic) at every state change and log line. A
// record file is
//
//	magic "SJOB" | version u8 (1) | payload length u32 LE | CRC-32C of the payload u32 LE | payload
//
// where the payload is the JSON jobRecord. decodeJobRecord checks each
// part and reports a damaged file as a *base.CorruptError with its path
// and the byte offset of the problem; the runner skips (and logs) such a
// file at startup rather than refusing to start.

const (
	jobMagic      = "SJOB"
	jobVersion    = 1
	jobHeaderSize = 4 + 1 + 4 + 4
	jobFileSuffix = ".job"
	// maxJobRecord bounds one record's payload (a 50-line log and params).
	maxJobRecord = 1 << 20
)

var jobCRC = crc32.MakeTable(crc32.Castagnoli)

// jobRecord is a job's durable state.
type jobRecord struct {
	ID       string          `json:"id"`
	Kind     string          `json:"kind"`
	Coll     string          `json:"collection,omitempty"`
	Path     string          `json:"path,omitempty"`
	Params   json.RawMessage `json:"params,omitempty"`
	State    JobState        `json:"state"`
	Progress float64         `json:"progress"`
	Log      []string        `json:"log,omitempty"`
	Created  time.Time       `json:"created"`
	Started  time.Time       `json:"started,omitzero"`
	Finished time.Time       `json:"finished,omitzero"`
	Error    string          `json:"error,omitempty"`
	Timeout  time.Duration   `json:"timeout_ns,omitempty"`
}

// encodeJobRecord returns the file content of r.
func encodeJobRecord(r *jobRecord) ([]byte, error) {
	payload, err := json.Marshal(r)
	if err != nil {
		return nil, err
	}
	b := make([]byte, jobHeaderSize, jobHeaderSize+len(payload))
	copy(b, jobMagic)
	b[4] = jobVersion
	binary.LittleEndian.PutUint32(b[5:], uint32(len(payload)))
	binary.LittleEndian.PutUint32(b[9:], crc32.Checksum(payload, jobCRC))
	return append(b, payload...), nil
}

// decodeJobRecord parses a record file's content; path names it in errors.
func decodeJobRecord(path string, b []byte) (*jobRecord, error) {
	corrupt := func(off int64, format string, args ...any) error {
		return base.Corruptf("job record", path, off, format, args...)
	}
	if len(b) < jobHeaderSize {
		return nil, corrupt(int64(len(b)), "truncated header: %d of %d bytes", len(b), jobHeaderSize)
	}
	if string(b[:4]) != jobMagic {
		return nil, corrupt(0, "bad magic %q", b[:4])
	}
	if b[4] != jobVersion {
		return nil, corrupt(4, "unsupported format version %d (want %d)", b[4], jobVersion)
	}
	n := binary.LittleEndian.Uint32(b[5:])
	if n > maxJobRecord {
		return nil, corrupt(5, "payload length %d above the limit %d", n, maxJobRecord)
	}
	if int64(len(b)-jobHeaderSize) != int64(n) {
		return nil, corrupt(jobHeaderSize, "payload is %d bytes, header says %d", len(b)-jobHeaderSize, n)
	}
	payload := b[jobHeaderSize:]
	if got, want := crc32.Checksum(payload, jobCRC), binary.LittleEndian.Uint32(b[9:]); got != want {
		return nil, corrupt(9, "checksum mismatch: payload %08x, header %08x", got, want)
	}
	var r jobRecord
	dec := json.NewDecoder(bytes.NewReader(payload))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&r); err != nil {
		return nil, corrupt(jobHeaderSize+dec.InputOffset(), "payload: %v", err)
	}
	if dec.More() {
		return nil, corrupt(jobHeaderSize+dec.InputOffset(), "trailing data after the payload")
	}
	if id, err := hex.DecodeString(r.ID); err != nil || len(id) != 16 {
		return nil, corrupt(jobHeaderSize, "job id %q is not 32 hex digits", r.ID)
	}
	switch r.State {
	case JobQueued, JobRunning, JobDone, JobFailed, JobCancelled, JobTimedOut, JobInterrupted:
	default:
		return nil, corrupt(jobHeaderSize, "unknown job state %q", r.State)
	}
	if r.Progress != r.Progress || r.Progress < 0 || r.Progress > 1 {
		return nil, corrupt(jobHeaderSize, "progress %v outside [0,1]", r.Progress)
	}
	return &r, nil
}

// jobStore reads and writes job records in dir.
type jobStore struct {
	fs  vfs.FS
	dir string
}

func openJobStore(fs vfs.FS, dir string) (*jobStore, error) {
	if err := vfs.MkdirAllDurable(fs, dir); err != nil {
		return nil, fmt.Errorf("server: job store: %w", err)
	}
	return &jobStore{fs: fs, dir: dir}, nil
}

func (st *jobStore) path(id string) string { return filepath.Join(st.dir, id+jobFileSuffix) }

// put writes r atomically.
func (st *jobStore) put(r *jobRecord) error {
	b, err := encodeJobRecord(r)
	if err != nil {
		return err
	}
	return vfs.WriteFileAtomic(st.fs, st.path(r.ID), func(w io.Writer) error {
		_, err := w.Write(b)
		return err
	})
}

// remove deletes a job's record.
func (st *jobStore) remove(id string) error {
	err := st.fs.Remove(st.path(id))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	return err
}

// load reads every record, oldest first (by creation time, then id).
// Damaged records are returned as errors (one per file) and skipped;
// leftover temp files of an interrupted write are removed.
func (st *jobStore) load() ([]*jobRecord, []error) {
	names, err := st.fs.List(st.dir)
	if err != nil {
		return nil, []error{fmt.Errorf("server: job store: %w", err)}
	}
	var recs []*jobRecord
	var errs []error
	for _, name := range names {
		p := filepath.Join(st.dir, name)
		if strings.HasSuffix(name, ".tmp") {
			_ = st.fs.Remove(p)
			continue
		}
		if !strings.HasSuffix(name, jobFileSuffix) {
			continue
		}
		b, err := readAll(st.fs, p)
		if err != nil {
			errs = append(errs, fmt.Errorf("server: job store: %w", err))
			continue
		}
		r, err := decodeJobRecord(p, b)
		if err == nil && r.ID+jobFileSuffix != name {
			err = base.Corruptf("job record", p, jobHeaderSize, "record of job %s in the file of another", r.ID)
		}
		if err != nil {
			errs = append(errs, err)
			continue
		}
		recs = append(recs, r)
	}
	sort.Slice(recs, func(i, j int) bool {
		if !recs[i].Created.Equal(recs[j].Created) {
			return recs[i].Created.Before(recs[j].Created)
		}
		return recs[i].ID < recs[j].ID
	})
	return recs, errs
}

func readAll(fs vfs.FS, p string) ([]byte, error) {
	f, err := fs.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, maxJobRecord+jobHeaderSize+1))
}
