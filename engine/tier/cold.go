package tier

import (
	"bytes"
	"cmp"
	"container/heap"
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	iofs "io/fs"
	"math"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/parquet-go/parquet-go"

	"github.com/stratasearch/strata/asm"
	"github.com/stratasearch/strata/engine/ivfpq"
	"github.com/stratasearch/strata/internal/base"
	"github.com/stratasearch/strata/internal/cancel"
	"github.com/stratasearch/strata/vfs"
)

// The cold tier: warm segments archived to Parquet (DESIGN.md "Cold
// archive"); see doc.go "Cold archive file" for the layout.

// ArchiveMeta describes one cold archive recorded in the manifest.
// Archives share the segment id space (ManifestState.NextSegmentID).
type ArchiveMeta struct {
	ID        uint64
	File      string // name inside the store directory
	MinEpoch  uint64 // smallest e_birth
	MaxEpoch  uint64 // largest e_birth
	Rows      uint64
	SizeBytes uint64
	// CRC32C (Castagnoli) of the whole file, checked before the file is
	// parsed when the store opens it.
	CRC32C uint32
}

func (s *ManifestState) archiveRows(id uint64) (uint64, bool) {
	i := sort.Search(len(s.Archives), func(i int) bool { return s.Archives[i].ID >= id })
	if i < len(s.Archives) && s.Archives[i].ID == id {
		return s.Archives[i].Rows, true
	}
	return 0, false
}

func (s *ManifestState) applyArchives(e Edit) error {
	for _, id := range e.RemoveArchives {
		i := sort.Search(len(s.Archives), func(i int) bool { return s.Archives[i].ID >= id })
		if i == len(s.Archives) || s.Archives[i].ID != id {
			return fmt.Errorf("tier: manifest edit removes unknown archive %d", id)
		}
		s.Archives = append(s.Archives[:i], s.Archives[i+1:]...)
	}
	for _, a := range e.AddArchives {
		i := sort.Search(len(s.Archives), func(i int) bool { return s.Archives[i].ID >= a.ID })
		if i < len(s.Archives) && s.Archives[i].ID == a.ID {
			return fmt.Errorf("tier: manifest edit adds duplicate archive %d", a.ID)
		}
		j := sort.Search(len(s.Segments), func(i int) bool { return s.Segments[i].ID >= a.ID })
		if j < len(s.Segments) && s.Segments[j].ID == a.ID {
			return fmt.Errorf("tier: manifest edit adds archive %d with a segment's id", a.ID)
		}
		s.Archives = slices.Insert(s.Archives, i, a)
	}
	return nil
}

// appendArchiveEdit appends the version-3 archive lists of e.
func appendArchiveEdit(dst []byte, e Edit) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(e.AddArchives)))
	for _, a := range e.AddArchives {
		dst = appendSeg(dst, SegmentMeta{ID: a.ID, File: a.File, MinEpoch: a.MinEpoch, MaxEpoch: a.MaxEpoch, Rows: a.Rows, SizeBytes: a.SizeBytes})
		dst = binary.AppendUvarint(dst, uint64(a.CRC32C))
	}
	dst = binary.AppendUvarint(dst, uint64(len(e.RemoveArchives)))
	for _, id := range e.RemoveArchives {
		dst = binary.AppendUvarint(dst, id)
	}
	return dst
}

func readArchiveEdit(d *decoder, e *Edit) {
	na := d.count(7, "added archives")
	for i := 0; i < na && d.err == nil; i++ {
		sg := readSeg(d)
		crc := d.uvarint("archive crc")
		if crc > math.MaxUint32 {
			d.fail("archive crc out of range")
		}
		e.AddArchives = append(e.AddArchives, ArchiveMeta{ID: sg.ID, File: sg.File, MinEpoch: sg.MinEpoch, MaxEpoch: sg.MaxEpoch,
			Rows: sg.Rows, SizeBytes: sg.SizeBytes, CRC32C: uint32(crc)})
	}
	nr := d.count(1, "removed archives")
	for i := 0; i < nr && d.err == nil; i++ {
		e.RemoveArchives = append(e.RemoveArchives, d.uvarint("removed archive id"))
	}
}

// Cold archive format (Parquet key-value metadata).
const (
	coldFormatVersion = 1
	kvFormat          = "strata.format_version"
	kvArchive         = "strata.archive"
	kvCodec           = "strata.codec"
)

func coldFileName(id uint64) string { return fmt.Sprintf("cold-%06d.parquet", id) }

func isColdFile(name string) bool {
	return strings.HasPrefix(name, "cold-") && (strings.HasSuffix(name, ".parquet") || strings.HasSuffix(name, ".parquet.tmp"))
}

// coldRow is one Parquet row (doc.go "Cold archive file").
type coldRow struct {
	ID          string    `parquet:"id,zstd"`
	Content     string    `parquet:"content,zstd"`
	Metadata    string    `parquet:"metadata,json,zstd"`
	Namespace   string    `parquet:"namespace,zstd"`
	SourceURI   string    `parquet:"source_uri,zstd"`
	Trust       uint8     `parquet:"trust,zstd"`
	ACL         []string  `parquet:"acl,list,zstd"`
	EBirth      uint64    `parquet:"e_birth,zstd"`
	EDeath      uint64    `parquet:"e_death,zstd"`
	VersionHash [32]byte  `parquet:"version_hash,zstd"`
	Committed   int64     `parquet:"committed,timestamp(nanosecond),zstd"`
	Code        *[18]byte `parquet:"code,optional,zstd"`
	Vector      []float32 `parquet:"vector,list,optional,zstd"`
}

var coldColumns = []string{"id", "content", "metadata", "namespace", "source_uri", "trust", "acl",
	"e_birth", "e_death", "version_hash", "committed", "code", "vector"}

// archiveInfo is the JSON of the strata.archive key-value entry.
type archiveInfo struct {
	Dim      int    `json:"dim"`
	Metric   string `json:"metric"`
	Rows     uint64 `json:"rows"`
	MinEpoch uint64 `json:"min_epoch"`
	MaxEpoch uint64 `json:"max_epoch"`
	// CodecDim is the codec's dimension: Dim rounded up to a multiple of
	// 16 (vectors are zero-padded, which changes no L2 or inner product).
	CodecDim int `json:"codec_dim"`
	// Vectors: the vector column holds the exact vectors (otherwise
	// vectors are the codes' reconstructions).
	Vectors bool `json:"vectors"`
	Nlist   int  `json:"nlist"`
}

// ArchiveOptions configures Store.Archive.
type ArchiveOptions struct {
	// Segments lists the warm segment ids to archive (into one archive).
	// Empty: the Oldest oldest segments.
	Segments []uint64
	// Oldest is the number of oldest warm segments archived when Segments
	// is empty: those with the smallest SegmentMeta.MinEpoch (the oldest
	// row; ties by id), since a merge or deferred index build gives its
	// output a new, higher id than segments with newer rows. Default 1.
	Oldest int
	// Nlist is the coarse quantizer size of the archive's codec (≤ 65536).
	// Default clamp(√n, 1, 1024) for n vectors.
	Nlist int
	// OmitVectors leaves the vector column null: only the 18-byte codes
	// are kept, dense cold search has no exact rerank, and Promote
	// restores the codes' reconstructions (lossy). Default false (exact
	// vectors stored; Promote is lossless).
	OmitVectors bool
	// KMeansIters is the k-means iteration count of codec training.
	// Default 10.
	KMeansIters int
	// Seed seeds codec training.
	Seed uint64
}

// Validate reports every problem of o.
func (o *ArchiveOptions) Validate() error {
	var errs []error
	if o.Oldest < 0 {
		errs = append(errs, fmt.Errorf("tier: ArchiveOptions.Oldest %d must be >= 0", o.Oldest))
	}
	if o.Nlist < 0 || o.Nlist > ivfpq.ColdMaxNlist {
		errs = append(errs, fmt.Errorf("tier: ArchiveOptions.Nlist %d outside [0,%d]", o.Nlist, ivfpq.ColdMaxNlist))
	}
	if o.KMeansIters < 0 {
		errs = append(errs, fmt.Errorf("tier: ArchiveOptions.KMeansIters %d must be >= 0", o.KMeansIters))
	}
	return errors.Join(errs...)
}

// ErrNoSuchArchive is returned by Promote for an id that is not a live
// archive, and by Archive for a segment id that is not a warm segment.
var ErrNoSuchArchive = errors.New("tier: no such archive or segment")

// coldArchive is an opened, immutable cold archive plus its mutable death
// column, decoded into memory when opened (documents, codes, vectors).
type coldArchive struct {
	meta   ArchiveMeta
	info   archiveInfo
	path   string
	dim    int
	metric Metric

	docs  []*Document
	birth []uint64
	death []atomic.Uint64
	ids   map[string][]uint32

	codec   *ivfpq.ColdCodec // nil when no row has a vector
	codes   []byte           // code i belongs to row codeRow[i]
	codeRow []uint32
	rowCode []int32 // row → code index, or -1

	refs     atomic.Int64
	obsolete atomic.Bool
	retired  atomic.Bool
	onFree   func(*coldArchive)
	freeOnce sync.Once
}

func (a *coldArchive) visible(r uint32, e uint64) bool {
	return a.birth[r] <= e && e < a.death[r].Load()
}

func (a *coldArchive) get(id string, e uint64) (uint32, bool) {
	for _, r := range a.ids[id] {
		if a.visible(r, e) {
			return r, true
		}
	}
	return 0, false
}

func (a *coldArchive) kill(id string, e uint64) bool {
	for _, r := range a.ids[id] {
		if a.death[r].Load() == epochLive {
			a.death[r].Store(e)
			return true
		}
	}
	return false
}

func (a *coldArchive) ref() { a.refs.Add(1) }

func (a *coldArchive) unref() {
	if a.refs.Add(-1) == 0 && (a.obsolete.Load() || a.retired.Load()) {
		a.free()
	}
}

func (a *coldArchive) free() {
	a.freeOnce.Do(func() {
		if a.onFree != nil {
			a.onFree(a)
		}
	})
}

// padTo copies v into a zero-padded vector of pd floats (normalised
// first for cosine).
func padTo(v []float32, pd int, m Metric) []float32 {
	out := make([]float32, pd)
	if m == Cosine {
		v = base.UnitVector(nil, v)
	}
	copy(out, v)
	return out
}

// trainColdCodec trains the archive's codec on the (padded) vectors x
// (n×pd). The product quantizer needs 256 training points: a smaller set
// is repeated with a small seeded jitter.
func trainColdCodec(x []float32, pd int, m Metric, o ArchiveOptions) (*ivfpq.ColdCodec, int, error) {
	n := len(x) / pd
	train := x
	if n < 256 {
		rng := rand.New(rand.NewPCG(o.Seed, 0x636f6c64))
		var scale float64
		for _, v := range x {
			scale += float64(v) * float64(v)
		}
		scale = math.Sqrt(scale/float64(len(x))) * 1e-3
		if scale == 0 {
			scale = 1e-6
		}
		train = make([]float32, 0, 256*pd)
		train = append(train, x...)
		for i := n; i < 256; i++ {
			src := x[(i%n)*pd : (i%n+1)*pd]
			for _, v := range src {
				train = append(train, v+float32(rng.NormFloat64()*scale))
			}
		}
	}
	nlist := o.Nlist
	if nlist == 0 {
		nlist = min(1024, max(1, int(math.Sqrt(float64(n)))))
	}
	nlist = min(nlist, len(train)/pd)
	iters := o.KMeansIters
	if iters == 0 {
		iters = 10
	}
	c, err := ivfpq.TrainColdCodec(train, ivfpq.Options{Dim: pd, Metric: ivfMetric(m), Nlist: nlist,
		KMeansIters: iters, MaxPointsPerCentroid: 64, Seed: o.Seed, Threads: 1})
	if err != nil {
		return nil, 0, fmt.Errorf("tier: train cold codec: %w", err)
	}
	return c, nlist, nil
}

// buildArchive writes rows as a cold archive (Parquet, zstd) to w.
func buildArchive(w io.Writer, rows []segRow, dim int, metric Metric, o ArchiveOptions) error {
	pd := (dim + ivfpq.ColdM - 1) / ivfpq.ColdM * ivfpq.ColdM
	info := archiveInfo{Dim: dim, Metric: metric.String(), Rows: uint64(len(rows)), CodecDim: pd, Vectors: !o.OmitVectors}
	var x []float32
	minE, maxE := uint64(math.MaxUint64), uint64(0)
	for _, r := range rows {
		if r.doc.Vector != nil {
			x = append(x, padTo(r.doc.Vector, pd, metric)...)
		}
		minE, maxE = min(minE, r.birth), max(maxE, r.birth)
	}
	if len(rows) == 0 {
		minE = 0
	}
	info.MinEpoch, info.MaxEpoch = minE, maxE
	var codec *ivfpq.ColdCodec
	var codes []byte
	opts := []parquet.WriterOption{parquet.Compression(&parquet.Zstd),
		parquet.KeyValueMetadata(kvFormat, strconv.Itoa(coldFormatVersion))}
	if len(x) > 0 {
		var err error
		codec, info.Nlist, err = trainColdCodec(x, pd, metric, o)
		if err != nil {
			return err
		}
		if codes, err = codec.Encode(nil, x); err != nil {
			return fmt.Errorf("tier: cold encode: %w", err)
		}
		var cb bytes.Buffer
		if _, err := codec.WriteTo(&cb); err != nil {
			return fmt.Errorf("tier: cold codec: %w", err)
		}
		opts = append(opts, parquet.KeyValueMetadata(kvCodec, base64.StdEncoding.EncodeToString(cb.Bytes())))
	}
	ij, _ := json.Marshal(info)
	opts = append(opts, parquet.KeyValueMetadata(kvArchive, string(ij)))
	pw := parquet.NewGenericWriter[coldRow](w, opts...)
	batch := make([]coldRow, 0, 256)
	ci := 0
	for i, r := range rows {
		d := r.doc
		meta := "{}"
		if len(d.Metadata) > 0 {
			b, err := json.Marshal(d.Metadata) // keys sorted
			if err != nil {
				return fmt.Errorf("tier: cold metadata row %d: %w", i, err)
			}
			meta = string(b)
		}
		text, err := d.Text()
		if err != nil {
			return err
		}
		hash, err := d.Hash()
		if err != nil {
			return err
		}
		cr := coldRow{ID: d.ID, Content: text, Metadata: meta, Namespace: d.Namespace, SourceURI: d.SourceURI,
			Trust: uint8(d.Trust), ACL: d.ACL, EBirth: r.birth, EDeath: epochLive, VersionHash: hash,
			Committed: d.UpdatedUnixNano}
		if d.Vector != nil {
			var c [ivfpq.ColdCodeSize]byte
			copy(c[:], codes[ci*ivfpq.ColdCodeSize:])
			cr.Code = &c
			ci++
			if !o.OmitVectors {
				cr.Vector = d.Vector
			}
		}
		batch = append(batch, cr)
		if len(batch) == cap(batch) || i == len(rows)-1 {
			if _, err := pw.Write(batch); err != nil {
				return fmt.Errorf("tier: write cold archive: %w", err)
			}
			batch = batch[:0]
		}
	}
	if err := pw.Close(); err != nil {
		return fmt.Errorf("tier: write cold archive: %w", err)
	}
	return nil
}

// OpenArchive parses a cold archive held in data (path names it in
// errors) for a store of dimension dim and metric m. Every structural
// problem is an error naming path and a byte offset that matches
// ErrCorrupt, never a panic.
func openArchive(data []byte, path string, dim int, m Metric) (a *coldArchive, err error) {
	defer func() {
		if r := recover(); r != nil {
			a, err = nil, archiveCorrupt(path, 0, "parquet decoder: %v", r)
		}
	}()
	n := int64(len(data))
	footer := max(n-8, 0)
	if at, why := checkParquetFooter(data); why != "" {
		return nil, archiveCorrupt(path, at, "%s", why)
	}
	f, err := parquet.OpenFile(bytes.NewReader(data), n, parquet.SkipPageIndex(true), parquet.SkipBloomFilters(true))
	if err != nil {
		return nil, archiveCorrupt(path, footer, "parquet: %v", err)
	}
	fv, ok := f.Lookup(kvFormat)
	if !ok {
		return nil, archiveCorrupt(path, footer, "no %s key-value entry (not a Strata cold archive)", kvFormat)
	}
	if v, err := strconv.Atoi(fv); err != nil || v < 1 {
		return nil, archiveCorrupt(path, footer, "bad %s %q", kvFormat, fv)
	} else if v > coldFormatVersion {
		return nil, archiveCorrupt(path, footer, "cold archive format version %d is newer than this build reads (%d)", v, coldFormatVersion)
	}
	var info archiveInfo
	ij, _ := f.Lookup(kvArchive)
	dec := json.NewDecoder(strings.NewReader(ij))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&info); err != nil {
		return nil, archiveCorrupt(path, footer, "%s: %v", kvArchive, err)
	}
	if info.Dim != dim || info.Metric != m.String() {
		return nil, archiveCorrupt(path, footer, "archive dim %d metric %s, store has dim %d metric %v", info.Dim, info.Metric, dim, m)
	}
	pd := (dim + ivfpq.ColdM - 1) / ivfpq.ColdM * ivfpq.ColdM
	if info.CodecDim != pd {
		return nil, archiveCorrupt(path, footer, "codec dim %d, want %d", info.CodecDim, pd)
	}
	if f.NumRows() < 0 || uint64(f.NumRows()) != info.Rows || info.Rows > uint64(n) {
		return nil, archiveCorrupt(path, footer, "parquet has %d rows, %s says %d", f.NumRows(), kvArchive, info.Rows)
	}
	fields := f.Schema().Fields()
	if len(fields) != len(coldColumns) {
		return nil, archiveCorrupt(path, footer, "schema has %d columns, want %d", len(fields), len(coldColumns))
	}
	for i, fl := range fields {
		if fl.Name() != coldColumns[i] {
			return nil, archiveCorrupt(path, footer, "column %d is %q, want %q", i, fl.Name(), coldColumns[i])
		}
	}
	if !parquet.SameNodes(f.Schema(), parquet.SchemaOf(coldRow{})) {
		return nil, archiveCorrupt(path, footer, "schema differs from the cold archive schema")
	}
	a = &coldArchive{info: info, path: path, dim: dim, metric: m,
		docs: make([]*Document, 0, info.Rows), birth: make([]uint64, 0, info.Rows), ids: map[string][]uint32{}}
	if cs, ok := f.Lookup(kvCodec); ok {
		cb, err := base64.StdEncoding.DecodeString(cs)
		if err != nil {
			return nil, archiveCorrupt(path, footer, "%s: %v", kvCodec, err)
		}
		if a.codec, err = ivfpq.OpenColdCodec(cb); err != nil {
			return nil, archiveCorrupt(path, footer, "%s: %v", kvCodec, err)
		}
		if a.codec.Dim() != pd || a.codec.Index().Options().Metric != ivfMetric(m) {
			return nil, archiveCorrupt(path, footer, "codec dim %d metric %v, want %d %v", a.codec.Dim(), a.codec.Index().Options().Metric, pd, ivfMetric(m))
		}
		info.Nlist = a.codec.Index().Options().Nlist
	}
	rd := parquet.NewGenericReader[coldRow](f)
	defer rd.Close()
	buf := make([]coldRow, 256)
	var deaths []uint64
	for uint64(len(a.docs)) < info.Rows {
		k, rerr := rd.Read(buf)
		for _, cr := range buf[:k] {
			r := uint32(len(a.docs))
			if uint64(r) >= info.Rows {
				return nil, archiveCorrupt(path, 0, "more rows than the %d recorded", info.Rows)
			}
			if cr.ID == "" {
				return nil, archiveCorrupt(path, 0, "row %d has an empty id", r)
			}
			if cr.EBirth < info.MinEpoch || cr.EBirth > info.MaxEpoch || cr.EDeath <= cr.EBirth {
				return nil, archiveCorrupt(path, 0, "row %d epochs [%d,%d) outside [%d,%d]", r, cr.EBirth, cr.EDeath, info.MinEpoch, info.MaxEpoch)
			}
			d := &Document{ID: cr.ID, Content: cr.Content, SourceURI: cr.SourceURI, Namespace: cr.Namespace,
				Trust: Trust(cr.Trust), VersionHash: cr.VersionHash, UpdatedUnixNano: cr.Committed}
			if len(cr.ACL) > 0 {
				d.ACL = append([]string(nil), cr.ACL...)
			}
			if cr.Metadata != "{}" {
				if err := json.Unmarshal([]byte(cr.Metadata), &d.Metadata); err != nil {
					return nil, archiveCorrupt(path, 0, "row %d metadata: %v", r, err)
				}
			}
			if cr.Code != nil {
				if a.codec == nil {
					return nil, archiveCorrupt(path, 0, "row %d has a code but the archive has no codec", r)
				}
				if l := int(binary.LittleEndian.Uint16(cr.Code[:])); l >= info.Nlist {
					return nil, archiveCorrupt(path, 0, "row %d code names centroid %d ≥ nlist %d", r, l, info.Nlist)
				}
				switch {
				case info.Vectors && len(cr.Vector) == dim:
					d.Vector = slices.Clip(append([]float32(nil), cr.Vector...))
				case !info.Vectors && len(cr.Vector) == 0:
					rec, err := a.codec.Decode(nil, cr.Code[:])
					if err != nil {
						return nil, archiveCorrupt(path, 0, "row %d code: %v", r, err)
					}
					d.Vector = rec[:dim:dim]
				default:
					return nil, archiveCorrupt(path, 0, "row %d vector has %d floats (vectors stored: %v, dim %d)", r, len(cr.Vector), info.Vectors, dim)
				}
				a.codeRow = append(a.codeRow, r)
				a.codes = append(a.codes, cr.Code[:]...)
			} else if len(cr.Vector) != 0 {
				return nil, archiveCorrupt(path, 0, "row %d has a vector but no code", r)
			}
			a.docs = append(a.docs, d)
			a.birth = append(a.birth, cr.EBirth)
			deaths = append(deaths, cr.EDeath)
			a.ids[cr.ID] = append(a.ids[cr.ID], r)
		}
		if rerr == io.EOF {
			break
		}
		if rerr != nil {
			return nil, archiveCorrupt(path, 0, "read rows: %v", rerr)
		}
		if k == 0 {
			return nil, archiveCorrupt(path, 0, "reader made no progress at row %d", len(a.docs))
		}
	}
	if uint64(len(a.docs)) != info.Rows {
		return nil, archiveCorrupt(path, 0, "read %d rows, %s says %d", len(a.docs), kvArchive, info.Rows)
	}
	a.death = make([]atomic.Uint64, len(a.docs))
	for i, d := range deaths {
		a.death[i].Store(d)
	}
	a.rowCode = make([]int32, len(a.docs))
	for i := range a.rowCode {
		a.rowCode[i] = -1
	}
	for i, r := range a.codeRow {
		a.rowCode[r] = int32(i)
	}
	a.meta = ArchiveMeta{MinEpoch: info.MinEpoch, MaxEpoch: info.MaxEpoch, Rows: info.Rows, SizeBytes: uint64(n)}
	return a, nil
}

// loadArchive reads and parses archive file name; with want non-nil the
// file's CRC32C must equal *want (checked before parsing).
func (s *Store) loadArchive(name string, want *uint32) (*coldArchive, error) {
	path := filepath.Join(s.o.Dir, name)
	data, release, err := loadFile(s.o.FS, path)
	if err != nil {
		if errors.Is(err, iofs.ErrNotExist) {
			return nil, segCorrupt(path, 0, "listed in the manifest but missing")
		}
		return nil, fmt.Errorf("tier: open archive %s: %w", path, err)
	}
	crc := crc32.Checksum(data, crcTable)
	if want != nil && crc != *want {
		if release != nil {
			release()
		}
		return nil, archiveCorrupt(path, 0, "file CRC32C %08x, manifest says %08x", crc, *want)
	}
	a, err := openArchive(data, path, s.o.Dim, s.o.Metric)
	if release != nil {
		release() // everything was decoded into memory
	}
	if err != nil {
		return nil, err
	}
	a.meta.File, a.meta.CRC32C = name, crc
	fs, dir := s.o.FS, s.o.Dir
	a.onFree = func(c *coldArchive) {
		if c.obsolete.Load() {
			fs.Remove(c.path)
			vfs.SyncDir(fs, dir)
		}
	}
	return a, nil
}

// openArchives opens the manifest's archives and applies their
// tombstones (unlisted archive files: sweepUnreferenced, recovery.go).
func (s *Store) openArchives(st ManifestState) ([]*coldArchive, error) {
	var out []*coldArchive
	byID := map[uint64]*coldArchive{}
	for _, m := range st.Archives {
		a, err := s.loadArchive(m.File, &m.CRC32C)
		if err != nil {
			return nil, err
		}
		if a.meta.Rows != m.Rows {
			return nil, archiveCorrupt(a.path, 0, "archive has %d rows, manifest says %d", a.meta.Rows, m.Rows)
		}
		a.meta.ID = m.ID
		out = append(out, a)
		byID[m.ID] = a
	}
	for _, t := range st.Tombstones {
		a := byID[t.Segment]
		if a == nil {
			continue // a segment's tombstone
		}
		if uint64(t.Row) >= a.meta.Rows || a.death[t.Row].Load() != epochLive {
			return nil, fmt.Errorf("%w: tier: manifest tombstone %+v does not name a live archive row", ErrCorrupt, t)
		}
		a.death[t.Row].Store(t.Death)
	}
	return out, nil
}

// Archive moves warm segments to one cold archive: their rows live at
// the current epoch (with later deaths carried over) are written as
// Parquet (temp → fsync → rename → fsync dir), then one manifest edit
// removes the segments, adds the archive and records the carried
// tombstones ≤ the durable epoch. Queries and writes continue while the
// archive is built and its codec trained; writes wait only for the swap.
// It returns the archive's id. Errors: ErrNoSuchArchive (a named segment
// is not a warm segment; no segment to archive), options, I/O (the
// store is unchanged unless the manifest edit failed: ErrReadOnly).
func (s *Store) Archive(ctx context.Context, o ArchiveOptions) (uint64, error) {
	if err := o.Validate(); err != nil {
		return 0, err
	}
	if o.Oldest == 0 {
		o.Oldest = 1
	}
	if s.closed.Load() {
		return 0, ErrClosed
	}
	s.maintMu.Lock()
	defer s.maintMu.Unlock()
	if s.closed.Load() {
		return 0, ErrClosed
	}
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	if err := s.Err(); err != nil {
		return 0, err
	}
	v := s.currentView()
	defer v.unref()
	var victims []*warmSegment
	if len(o.Segments) == 0 {
		byAge := slices.Clone(v.segs)
		slices.SortStableFunc(byAge, func(a, b *warmSegment) int { return cmp.Compare(a.meta.MinEpoch, b.meta.MinEpoch) })
		for _, sg := range v.segs { // in the view's order
			if slices.Contains(byAge[:min(o.Oldest, len(byAge))], sg) {
				victims = append(victims, sg)
			}
		}
	} else {
		for _, id := range o.Segments {
			i := slices.IndexFunc(v.segs, func(sg *warmSegment) bool { return sg.meta.ID == id })
			if i < 0 {
				return 0, fmt.Errorf("%w: warm segment %d", ErrNoSuchArchive, id)
			}
			if !containsSeg(victims, v.segs[i]) {
				victims = append(victims, v.segs[i])
			}
		}
	}
	if len(victims) == 0 {
		return 0, fmt.Errorf("%w: no warm segment to archive", ErrNoSuchArchive)
	}
	E := s.visible.Load()
	type src struct {
		sg  *warmSegment
		row uint32
	}
	var rows []segRow
	var srcs []src
	for _, sg := range victims {
		for r := range sg.docs {
			if sg.death[r].Load() > E {
				rows = append(rows, segRow{doc: sg.docs[r], birth: sg.birth[r]})
				srcs = append(srcs, src{sg, uint32(r)})
			}
		}
	}
	id := s.allocSegmentID()
	name := coldFileName(id)
	path := filepath.Join(s.o.Dir, name)
	if err := vfs.WriteFileAtomic(s.o.FS, path, func(w io.Writer) error {
		return buildArchive(w, rows, s.o.Dim, s.o.Metric, o)
	}); err != nil {
		s.o.FS.Remove(path)
		return 0, fmt.Errorf("tier: write archive: %w", err)
	}
	a, err := s.loadArchive(name, nil)
	if err != nil {
		s.o.FS.Remove(path)
		return 0, err
	}
	a.meta.ID = id
	if err := ctx.Err(); err != nil {
		a.obsolete.Store(true)
		a.free()
		return 0, err
	}
	s.applyMu.Lock()
	defer s.applyMu.Unlock()
	D := s.manifest.State().DurableEpoch
	edit := Edit{NextSegmentID: s.segmentIDCounter(id), AddArchives: []ArchiveMeta{a.meta}}
	for _, sg := range victims {
		edit.Remove = append(edit.Remove, sg.meta.ID)
	}
	for i, sr := range srcs {
		d := sr.sg.death[sr.row].Load()
		if d == epochLive {
			continue
		}
		a.death[i].Store(d)
		if d <= D {
			edit.Tombstones = append(edit.Tombstones, Tombstone{Segment: id, Row: uint32(i), Death: d})
		}
	}
	if err := s.manifest.Apply(edit); err != nil {
		a.obsolete.Store(true)
		a.free()
		if s.manifest.Err() != nil {
			return 0, fmt.Errorf("%w: %w", ErrReadOnly, err)
		}
		return 0, err
	}
	cur := s.cur
	var segs []*warmSegment
	for _, sg := range cur.segs {
		if !containsSeg(victims, sg) {
			segs = append(segs, sg)
		}
	}
	for _, sg := range victims {
		sg.obsolete.Store(true)
	}
	cold := append(append([]*coldArchive(nil), cur.cold...), a)
	s.swapView(cur.derive(segs, cold))
	return id, nil
}

// Promote turns cold archive id back into a warm segment (rebuilt HNSW
// and BM25 section): its rows live at the current epoch, with their
// e_birth, ids, contents, metadata and vectors unchanged (the codes'
// reconstructions when the archive omitted vectors), and later deaths
// carried over; one manifest edit removes the archive and adds the
// segment. progress, if non-nil, is called with (done, total) steps
// (total 4: read, build, write, swap). Writes wait only for the swap.
// It returns the new segment's id.
func (s *Store) Promote(ctx context.Context, id uint64, progress func(done, total int)) (uint64, error) {
	step := func(i int) {
		if progress != nil {
			progress(i, 4)
		}
	}
	if s.closed.Load() {
		return 0, ErrClosed
	}
	s.maintMu.Lock()
	defer s.maintMu.Unlock()
	if s.closed.Load() {
		return 0, ErrClosed
	}
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	if err := s.Err(); err != nil {
		return 0, err
	}
	v := s.currentView()
	defer v.unref()
	i := slices.IndexFunc(v.cold, func(a *coldArchive) bool { return a.meta.ID == id })
	if i < 0 {
		return 0, fmt.Errorf("%w: archive %d", ErrNoSuchArchive, id)
	}
	a := v.cold[i]
	E := s.visible.Load()
	var rows []segRow
	var src []uint32
	for r := range a.docs {
		if a.death[r].Load() > E {
			rows = append(rows, segRow{doc: a.docs[r], birth: a.birth[r]})
			src = append(src, uint32(r))
		}
	}
	step(1)
	nid := s.allocSegmentID()
	var seg *warmSegment
	if len(rows) > 0 {
		data, err := buildSegment(rows, s.buildOptions())
		if err != nil {
			return 0, err
		}
		step(2)
		if err := ctx.Err(); err != nil {
			return 0, err
		}
		name := segFileName(nid)
		if err := s.writeSegment(name, data); err != nil {
			return 0, err
		}
		if seg, err = s.loadSegment(name); err != nil {
			s.o.FS.Remove(filepath.Join(s.o.Dir, name))
			return 0, err
		}
		seg.meta.ID = nid
	} else {
		step(2)
	}
	step(3)
	s.applyMu.Lock()
	defer s.applyMu.Unlock()
	D := s.manifest.State().DurableEpoch
	edit := Edit{NextSegmentID: s.segmentIDCounter(nid), RemoveArchives: []uint64{id}}
	if seg != nil {
		edit.Add = []SegmentMeta{seg.meta}
		for j, r := range src {
			d := a.death[r].Load()
			if d == epochLive {
				continue
			}
			seg.setDeath(uint32(j), d)
			if d <= D {
				edit.Tombstones = append(edit.Tombstones, Tombstone{Segment: nid, Row: uint32(j), Death: d})
			}
		}
	}
	if err := s.manifest.Apply(edit); err != nil {
		if seg != nil {
			seg.obsolete.Store(true)
			seg.free()
		}
		if s.manifest.Err() != nil {
			return 0, fmt.Errorf("%w: %w", ErrReadOnly, err)
		}
		return 0, err
	}
	cur := s.cur
	segs := append([]*warmSegment(nil), cur.segs...)
	if seg != nil {
		segs = append(segs, seg)
		sort.Slice(segs, func(i, j int) bool { return segs[i].meta.ID < segs[j].meta.ID })
	}
	var cold []*coldArchive
	for _, c := range cur.cold {
		if c != a {
			cold = append(cold, c)
		}
	}
	a.obsolete.Store(true)
	s.swapView(cur.derive(segs, cold))
	step(4)
	return nid, nil
}

// Archives returns the manifest's cold archives.
func (s *Store) Archives() []ArchiveMeta { return s.manifest.State().Archives }

// ColdArchive is a read-only handle on one cold archive of a Snapshot's
// view.
type ColdArchive struct {
	ID   uint64
	Path string
	// Docs are the rows' documents, row order (shared, read-only; the
	// same pointers SearchCold hits carry).
	Docs []*Document
}

// ColdArchives returns the snapshot's cold archives, ascending ID.
func (sn *Snapshot) ColdArchives() []ColdArchive {
	out := make([]ColdArchive, len(sn.v.cold))
	for i, a := range sn.v.cold {
		out[i] = ColdArchive{ID: a.meta.ID, Path: a.path, Docs: a.docs}
	}
	return out
}

// VisibleColdRow reports whether row of the i-th archive of ColdArchives
// is live at the snapshot.
func (sn *Snapshot) VisibleColdRow(i int, row uint32) bool {
	return sn.v.cold[i].visible(row, sn.epoch)
}

// coldGet returns id's version in the cold archives visible at e.
func (v *view) coldGet(id string, e uint64) (*Document, uint64, bool) {
	for i := len(v.cold) - 1; i >= 0; i-- {
		a := v.cold[i]
		if r, ok := a.get(id, e); ok {
			return a.docs[r], a.birth[r], true
		}
	}
	return nil, 0, false
}

// coldKill ends id's live cold row (if any) at e.
func (v *view) coldKill(id string, e uint64) bool {
	for i := len(v.cold) - 1; i >= 0; i-- {
		if v.cold[i].kill(id, e) {
			return true
		}
	}
	return false
}

// SearchCold returns up to k nearest documents in the snapshot's cold
// archives that are live at its epoch and pass filter (nil: all),
// nearest first, with the Metric's distances. Each archive is scanned
// with ADC over its 18-byte codes (ivfpq.ColdCodec.Scan, every centroid
// probed), visibility and filter applied to every code before it can
// enter the candidate heap; the best kFactor·k (kFactor ≤ 0: 4) are
// reranked by exact distance (the stored vectors; the codes'
// reconstructions when the archive omitted them). q: Dim float32s.
func (sn *Snapshot) SearchCold(q []float32, k, kFactor int, filter func(*Document) bool) ([]Hit, error) {
	return sn.SearchColdContext(context.Background(), q, k, kFactor, filter)
}

// SearchColdContext is SearchCold that stops early when ctx is done: each
// archive's visibility pass and ADC scan look at ctx every few thousand
// rows. A search cut short returns the hits found so far (a partial,
// possibly empty list, nearest first) with ctx.Err().
func (sn *Snapshot) SearchColdContext(ctx context.Context, q []float32, k, kFactor int, filter func(*Document) bool) ([]Hit, error) {
	if len(q) != sn.s.o.Dim {
		return nil, fmt.Errorf("tier: query vector has %d dimensions, want %d", len(q), sn.s.o.Dim)
	}
	if k <= 0 {
		return nil, nil
	}
	if kFactor <= 0 {
		kFactor = 4
	}
	var hits []Hit
	var cerr error // ctx.Err() when the search was cut short
	for _, a := range sn.v.cold {
		h, err := a.search(ctx, q, k, kFactor, sn.epoch, filter)
		if ctxErr(ctx, err) {
			cerr, err = err, nil
		}
		if err != nil {
			return nil, err
		}
		hits = append(hits, h...)
		if cerr != nil {
			break
		}
	}
	sort.SliceStable(hits, func(i, j int) bool { return hits[i].Distance < hits[j].Distance })
	if len(hits) > k {
		hits = hits[:k]
	}
	return hits, cerr
}

func (a *coldArchive) search(ctx context.Context, q []float32, k, kFactor int, e uint64, filter func(*Document) bool) ([]Hit, error) {
	if a.codec == nil {
		return nil, nil
	}
	done := ctx.Done()
	allow := roaring.New()
	for ci, r := range a.codeRow {
		if ci%rowCheck == 0 && cancel.Done(done) {
			return nil, ctx.Err()
		}
		if a.visible(r, e) && (filter == nil || filter(a.docs[r])) {
			allow.Add(uint32(ci))
		}
	}
	if allow.IsEmpty() {
		return nil, nil
	}
	pq := padTo(q, a.codec.Dim(), a.metric)
	res, err := a.codec.ScanContext(ctx, pq, a.codes, k*kFactor, ivfpq.ColdScanParams{Allow: allow})
	var cerr error
	if ctxErr(ctx, err) {
		cerr, err = err, nil
	}
	if err != nil {
		return nil, fmt.Errorf("tier: cold scan %s: %w", a.path, err)
	}
	qn := q
	if a.metric == Cosine {
		qn = base.UnitVector(nil, q)
	}
	h := make(hitHeap, 0, k+1)
	for _, r := range res {
		row := a.codeRow[r.ID]
		d := a.docs[row]
		var dist float32
		switch a.metric {
		case L2:
			dist = asm.L2Sq(q, d.Vector)
		case IP:
			dist = -asm.Dot(q, d.Vector)
		default:
			dist = 1 - asm.Dot(qn, base.UnitVector(nil, d.Vector))
		}
		heap.Push(&h, Hit{Doc: d, Epoch: a.birth[row], Distance: dist})
		if len(h) > k {
			heap.Pop(&h)
		}
	}
	out := make([]Hit, len(h))
	for i := len(h) - 1; i >= 0; i-- {
		out[i] = heap.Pop(&h).(Hit)
	}
	return out, cerr
}

// WithCold returns a handle on the same pinned view whose SearchVector
// also scans the cold archives (SearchCold, default rerank factor) and
// merges their hits. It shares sn's pin: use it only while sn is open;
// closing it is a no-op.
func (sn *Snapshot) WithCold() *Snapshot {
	w := &Snapshot{s: sn.s, epoch: sn.epoch, v: sn.v, withCold: true}
	w.closed.Store(true) // Close is a no-op: sn owns the pin
	return w
}

// Clone returns an independent Snapshot of the same epoch and view (its
// own pin and view reference; Close each).
func (sn *Snapshot) Clone() *Snapshot {
	s := sn.s
	s.pinMu.Lock()
	s.pins[sn.epoch]++
	s.pinMu.Unlock()
	sn.v.refs.Add(1)
	return &Snapshot{s: s, epoch: sn.epoch, v: sn.v, withCold: sn.withCold}
}
