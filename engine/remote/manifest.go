package remote

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/stratasearch/strata/engine/tier"
	"github.com/stratasearch/strata/internal/base"
)

// Keys under the store's prefix.
const (
	manifestDir = "manifests/"
	dataDir     = "data/"
	leaseKey    = "lease"
	readersDir  = "readers/"
	// cursorKeyObject holds the cursor HMAC key every reader of the
	// prefix uses (engine.CursorKeyFile in each view).
	cursorKeyObject = "cursor.key"
	// FormatVersion is the root manifest format this package writes.
	FormatVersion = 1
	// BlockSize is the span of each block checksum of an object (CRC32C
	// per 1 MiB), so a corrupt byte is reported with its block's offset.
	BlockSize = 1 << 20
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// ManifestKey is the key of root manifest version v: zero-padded so that
// key order is version order.
func ManifestKey(v uint64) string { return fmt.Sprintf("%s%020d.json", manifestDir, v) }

func parseManifestKey(k string) (uint64, bool) {
	s, ok := strings.CutPrefix(k, manifestDir)
	if !ok {
		return 0, false
	}
	s, ok = strings.CutSuffix(s, ".json")
	if !ok || len(s) != 20 {
		return 0, false
	}
	v, err := strconv.ParseUint(s, 10, 64)
	return v, err == nil && v > 0
}

// Manifest is one published version of a database: per collection its
// config and tier manifest state, and the objects holding its segment and
// archive files. Published once (If-None-Match: *) at ManifestKey(Version)
// and never changed.
type Manifest struct {
	FormatVersion int                  `json:"format_version"`
	Version       uint64               `json:"version"`
	Parent        uint64               `json:"parent"`
	Writer        string               `json:"writer"`
	LeaseToken    string               `json:"lease_token"`
	Created       time.Time            `json:"created"`
	Collections   []CollectionManifest `json:"collections"`
}

// CollectionManifest is one collection of a Manifest.
type CollectionManifest struct {
	Name string `json:"name"`
	// Config is the collection's collection.json, verbatim.
	Config json.RawMessage `json:"config"`
	// State is the tier manifest state (durable epoch, segments,
	// tombstones, archives) the objects make up.
	State   tier.ManifestState `json:"state"`
	Objects []Object           `json:"objects"`
}

// Object is one immutable segment or archive file in the bucket.
type Object struct {
	// File is the name in the store directory (SegmentMeta.File).
	File string `json:"file"`
	// Key is the object key under the prefix:
	// data/<collection>/<first 32 hex digits of SHA256>-<file>.
	Key    string   `json:"key"`
	Size   int64    `json:"size"`
	SHA256 string   `json:"sha256"` // hex, of the whole object
	Blocks []uint32 `json:"blocks"` // CRC32C of each BlockSize span
	// Lazy, when set, is a byte range a reader may leave remote until a
	// query needs it: the text section of a segment (tier format version
	// 3, tier.TextSection). The reader fetches the rest at open, checked
	// block by block, and the text blocks on demand, each checked
	// against the CRC32C in the segment's text index. Manifests without
	// it (older writers) are fetched whole.
	Lazy *Range `json:"lazy,omitempty"`
	// Postings, when set, is a second range a reader may leave remote:
	// the BM25 posting blobs of a segment (tier.PostingsSection). The
	// reader fetches the whole BlockSize blocks that a query's posting
	// lists lie in, each checked against its CRC32C in Blocks, when the
	// query first reads them. Readers that do not know the field fetch
	// the range at open.
	Postings *Range `json:"postings,omitempty"`
}

// lazy reports whether a reader may leave part of o remote.
func (o Object) lazy() bool { return o.Lazy != nil || o.Postings != nil }

// remoteBlock reports whether block b of o lies wholly inside one of its
// lazy ranges, so a reader may leave it remote at open.
func (o Object) remoteBlock(b int64) bool {
	lo, hi := b*BlockSize, min((b+1)*BlockSize, o.Size)
	for _, r := range []*Range{o.Lazy, o.Postings} {
		if r != nil && lo >= r.Off && hi <= r.Off+r.Len {
			return true
		}
	}
	return false
}

// Range is a byte range of an object.
type Range struct {
	Off int64 `json:"off"`
	Len int64 `json:"len"`
}

// objectKey names the object of file (content hash sum, hex) of a
// collection: the hash makes keys of different content differ even when
// two writers reuse a segment id. (Not a CRC32C of the file: a segment
// file ends with the CRC32C of what precedes it plus fixed bytes, so the
// CRC32C of every segment file is the same constant.)
func objectKey(collection, file, sum string) string {
	if len(sum) > 32 {
		sum = sum[:32]
	}
	return fmt.Sprintf("%s%s/%s-%s", dataDir, collection, sum, file)
}

// checksums returns the SHA-256 (hex) and per-block CRC32C of b.
func checksums(b []byte) (string, []uint32) {
	var blocks []uint32
	for off := 0; off < len(b); off += BlockSize {
		blocks = append(blocks, crc32.Checksum(b[off:min(off+BlockSize, len(b))], castagnoli))
	}
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:]), blocks
}

// DecodeManifest parses and validates a root manifest read from url (its
// s3:// address, for errors) that should hold version (0: any): format
// version, version, collection names, and every
// segment and archive of each state backed by exactly one object whose
// key lies under data/<collection>/ and whose block list fits its size.
// Damage is a *base.CorruptError naming url.
func DecodeManifest(url string, version uint64, b []byte) (*Manifest, error) {
	key := url
	bad := func(format string, a ...any) error {
		return &base.CorruptError{Kind: "remote manifest", Path: key, Reason: fmt.Sprintf(format, a...)}
	}
	var m Manifest
	if err := json.Unmarshal(b, &m); err != nil {
		var se *json.SyntaxError
		off := int64(0)
		if errors.As(err, &se) {
			off = se.Offset
		}
		return nil, &base.CorruptError{Kind: "remote manifest", Path: key, Offset: off, Reason: err.Error()}
	}
	if m.FormatVersion != FormatVersion {
		return nil, bad("format version %d, this build reads %d", m.FormatVersion, FormatVersion)
	}
	if version != 0 && version != m.Version {
		return nil, bad("version %d at the key of version %d", m.Version, version)
	}
	if m.Version == 0 || m.Parent >= m.Version {
		return nil, bad("version %d, parent %d", m.Version, m.Parent)
	}
	seen := map[string]bool{}
	for i := range m.Collections {
		c := &m.Collections[i]
		if !validName(c.Name) || seen[c.Name] {
			return nil, bad("collection %d: bad or repeated name %q", i, c.Name)
		}
		seen[c.Name] = true
		if !json.Valid(c.Config) || len(c.Config) == 0 {
			return nil, bad("collection %q: config is not JSON", c.Name)
		}
		files := map[string]bool{}
		for _, s := range c.State.Segments {
			files[s.File] = true
		}
		for _, a := range c.State.Archives {
			files[a.File] = true
		}
		if len(files) != len(c.State.Segments)+len(c.State.Archives) || len(c.Objects) != len(files) {
			return nil, bad("collection %q: %d objects for %d segments and %d archives", c.Name, len(c.Objects),
				len(c.State.Segments), len(c.State.Archives))
		}
		for _, o := range c.Objects {
			if !files[o.File] || !validName(o.File) {
				return nil, bad("collection %q: object for unknown file %q", c.Name, o.File)
			}
			delete(files, o.File)
			if len(o.SHA256) != 64 || o.Key != objectKey(c.Name, o.File, o.SHA256) || path.Clean(o.Key) != o.Key {
				return nil, bad("collection %q: object key %q does not match its file and checksum", c.Name, o.Key)
			}
			if o.Size < 0 || int64(len(o.Blocks)) != (o.Size+BlockSize-1)/BlockSize {
				return nil, bad("collection %q: object %q: %d block checksums for %d bytes", c.Name, o.Key, len(o.Blocks), o.Size)
			}
			for _, l := range []*Range{o.Lazy, o.Postings} {
				if l != nil && (l.Off < 0 || l.Len <= 0 || l.Off > o.Size || l.Len > o.Size-l.Off) {
					return nil, bad("collection %q: object %q: lazy range [%d,+%d) outside its %d bytes", c.Name, o.Key, l.Off, l.Len, o.Size)
				}
			}
		}
	}
	return &m, nil
}

// validName: a collection or file name usable as one path element.
func validName(s string) bool {
	return s != "" && s != "." && s != ".." && len(s) <= 255 && !strings.ContainsAny(s, "/\\\x00")
}
