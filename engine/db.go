package engine

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	"github.com/stratasearch/strata/engine/cursor"
	"github.com/stratasearch/strata/internal/base"
	"github.com/stratasearch/strata/vfs"
)

// Errors returned by DB and Collection methods. Validation problems are
// *contract.ValidationError (errors.Is(err, contract.ErrInvalid)) instead.
var (
	// ErrClosed is returned after DB.Close (or DropCollection of the
	// collection).
	ErrClosed = errors.New("engine: closed")
	// ErrNotFound: no such collection or document.
	ErrNotFound = errors.New("engine: not found")
	// ErrExists: CreateCollection of a name already in use.
	ErrExists = errors.New("engine: collection already exists")
	// ErrBadName: a collection name that cannot be a directory name.
	ErrBadName = errors.New("engine: invalid collection name")
	// ErrConflict: an Upsert's expected version hash (IfMatch) differs from
	// the stored version's.
	ErrConflict = errors.New("engine: version conflict")
	// ErrNoEmbedder: a dense or hybrid query with text but no vector, and the
	// collection has no embedder configured. It is never turned into a
	// lexical query silently.
	ErrNoEmbedder = errors.New("engine: query has text but no vector and the collection has no embedder configured")
	// ErrCorrupt: a collection's config file or cursor key is malformed
	// (a *CorruptError naming the file and byte offset). It is the
	// ErrCorrupt of every format (hnsw, ivfpq, bm25, tier, wal, datasets),
	// so it also matches their corruption errors.
	ErrCorrupt = base.ErrCorrupt
	// ErrUnavailable: a collection found on disk could not be opened (a
	// corrupt config or store; the message gives the reason). The rest of
	// the database serves; DB.Unavailable lists such collections.
	ErrUnavailable = errors.New("engine: collection unavailable")
)

const (
	collectionsDir = "collections"
	configFile     = "collection.json"
	storeDir       = "store"
	dropPrefix     = ".drop-"
	configVersion  = 1
)

// config is the JSON form of a collection's config file.
type config struct {
	FormatVersion int               `json:"format_version"`
	Name          string            `json:"name"`
	Options       CollectionOptions `json:"options"`
}

// DB is an open Strata database: a directory of collections. Safe for
// concurrent use.
type DB struct {
	dir string
	o   Options

	mu   sync.Mutex
	cols map[string]*Collection
	// broken holds the collections Open could not open (name → reason).
	broken map[string]error
	closed bool

	keyOnce sync.Once // CursorKeys
	keys    [][]byte
	keyErr  error
}

// CursorKeyFile is the file in the DB directory holding the 32-byte HMAC
// key that signs the DB's cursors (search cursors, and the server's
// listing cursors). It is created (written atomically, mode 0600) by the
// first call that needs it (CursorKey; the first search that issues a
// cursor), through Options.FS.
const CursorKeyFile = "cursor.key"

// LegacyCursorKeyFile is where the server kept the key of its listing
// cursors before the DB owned one key. When CursorKeyFile does not exist
// yet, it is created with this file's key, so every cursor issued before
// stays valid; when both exist and differ (a store whose searches issued
// cursors before), this file is only read, and its key still verifies the
// listing cursors it signed (CursorKeys). A damaged legacy file is
// ignored: the listing cursors it signed then stop verifying (a 400; the
// listing restarts from its first page). The file is never written.
const LegacyCursorKeyFile = "server/cursor.key"

// CursorKey returns the HMAC key that signs the DB's cursors (see
// CursorKeyFile), creating it on first use. Errors: ErrCorrupt naming the
// file when it exists but is not a key (it is never replaced), I/O errors
// (a read-only directory). The result is cached: every call returns the
// same key, or the same error.
func (db *DB) CursorKey() ([]byte, error) {
	keys, err := db.CursorKeys()
	if err != nil {
		return nil, err
	}
	return keys[0], nil
}

// CursorKeys returns CursorKey followed by the older keys that still
// verify cursors signed before (at most the key in LegacyCursorKeyFile,
// when it differs). Sign with the first, verify with any.
func (db *DB) CursorKeys() ([][]byte, error) {
	db.keyOnce.Do(func() {
		fs := db.o.FS
		legacy := filepath.Join(db.dir, filepath.FromSlash(LegacyCursorKeyFile))
		key, err := cursor.LoadKey(fs, filepath.Join(db.dir, CursorKeyFile), legacy)
		if errors.Is(err, cursor.ErrCorrupt) {
			err = fmt.Errorf("%w: %w", ErrCorrupt, err)
		}
		if err != nil {
			db.keyErr = fmt.Errorf("engine: cursor key: %w", err)
			return
		}
		db.keys = [][]byte{key}
		if old, err := cursor.ReadKey(fs, legacy); err == nil && !bytes.Equal(old, key) {
			db.keys = append(db.keys, old)
		}
	})
	return db.keys, db.keyErr
}

// Open opens (or creates) the database in dir and reopens every collection
// found there, replaying each one's WAL. A collection that cannot be
// opened (a corrupt config or store) does not stop the others: it is
// logged, left untouched on disk, and reported by Unavailable, and
// Collection returns ErrUnavailable with the reason for it. Layout:
//
//	dir/collections/<name>/collection.json   config (written atomically)
//	dir/collections/<name>/store/            the tier store (WAL, MANIFEST, ...)
func Open(dir string, o Options) (*DB, error) {
	o.EnsureDefaults()
	if err := o.Validate(); err != nil {
		return nil, err
	}
	fs := o.FS
	root := filepath.Join(dir, collectionsDir)
	if err := vfs.MkdirAllDurable(fs, root); err != nil {
		return nil, fmt.Errorf("engine: open %s: %w", dir, err)
	}
	db := &DB{dir: dir, o: o, cols: map[string]*Collection{}, broken: map[string]error{}}
	names, err := fs.List(root)
	if err != nil {
		return nil, fmt.Errorf("engine: open %s: %w", dir, err)
	}
	sort.Strings(names)
	for _, name := range names {
		p := filepath.Join(root, name)
		if fi, err := fs.Stat(p); err != nil || !fi.IsDir() {
			continue
		}
		if strings.HasPrefix(name, dropPrefix) {
			// A DropCollection interrupted after its rename: finish it.
			if err := vfs.RemoveAll(fs, p); err != nil {
				db.closeAll()
				return nil, fmt.Errorf("engine: remove dropped collection %s: %w", p, err)
			}
			if err := vfs.SyncDir(fs, root); err != nil {
				db.closeAll()
				return nil, fmt.Errorf("engine: remove dropped collection %s: %w", p, err)
			}
			continue
		}
		cfg, err := readConfig(fs, filepath.Join(p, configFile))
		if errors.Is(err, os.ErrNotExist) {
			// CreateCollection did not finish: no config was written.
			o.Logger.Warn("engine: ignoring collection directory without config", "dir", p)
			continue
		}
		if err != nil {
			db.markBroken(name, err)
			continue
		}
		c, err := openCollection(db, cfg.Name, p, cfg.Options)
		if err != nil {
			db.markBroken(cfg.Name, err)
			continue
		}
		db.cols[cfg.Name] = c
	}
	return db, nil
}

func (db *DB) markBroken(name string, err error) {
	db.o.Logger.Error("engine: collection unavailable; serving the others", "collection", name, "err", err)
	db.broken[name] = err
}

// Unavailable returns the collections found on disk that Open could not
// open, with the reason for each (nil when there is none).
func (db *DB) Unavailable() map[string]error {
	db.mu.Lock()
	defer db.mu.Unlock()
	if len(db.broken) == 0 {
		return nil
	}
	out := make(map[string]error, len(db.broken))
	for n, err := range db.broken {
		out[n] = err
	}
	return out
}

// CorruptError is the type of every corruption error, whatever the format
// (collection config, cursor key, WAL, manifest, segment, cold archive,
// hnsw, ivfpq, bm25): Kind names the format, Path the file, Offset the
// byte offset and Reason what is wrong. It matches errors.Is(err,
// ErrCorrupt); use errors.As to read the fields.
type CorruptError = base.CorruptError

// kindConfig is the CorruptError.Kind of a collection config file.
const kindConfig = "collection config"

func readConfig(fs vfs.FS, path string) (config, error) {
	b, err := vfs.ReadFile(fs, path)
	if err != nil {
		return config{}, fmt.Errorf("engine: read %s: %w", path, err)
	}
	return parseConfig(b, path)
}

// parseConfig decodes and checks a config file's bytes (closed schema, known
// format version, name matching its directory, valid options).
func parseConfig(b []byte, path string) (config, error) {
	var cfg config
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&cfg); err != nil {
		off := dec.InputOffset()
		var se *json.SyntaxError
		var te *json.UnmarshalTypeError
		if errors.As(err, &se) {
			off = se.Offset
		} else if errors.As(err, &te) {
			off = te.Offset
		}
		return cfg, &base.CorruptError{Kind: kindConfig, Path: path, Offset: off, Reason: "bad JSON", Err: err}
	}
	if dec.More() {
		return cfg, base.Corruptf(kindConfig, path, dec.InputOffset(), "trailing data after the config object")
	}
	if cfg.FormatVersion < 1 || cfg.FormatVersion > configVersion {
		return cfg, base.Corruptf(kindConfig, path, 0, "format_version %d, this build reads 1..%d", cfg.FormatVersion, configVersion)
	}
	if err := validateName(cfg.Name); err != nil || cfg.Name != filepath.Base(filepath.Dir(path)) {
		return cfg, base.Corruptf(kindConfig, path, 0, "name %q does not match its directory", cfg.Name)
	}
	cfg.Options.EnsureDefaults()
	if err := cfg.Options.Validate(); err != nil {
		return cfg, &base.CorruptError{Kind: kindConfig, Path: path, Reason: "invalid options", Err: err}
	}
	return cfg, nil
}

// CreateCollection creates collection name (1..128 of [A-Za-z0-9_.-]) with
// options o (defaults filled, then validated; every problem is reported).
// The config file is written atomically before the collection is usable.
// Errors: ErrBadName, ErrExists, ErrClosed, option problems.
func (db *DB) CreateCollection(name string, o CollectionOptions) (*Collection, error) {
	if err := validateName(name); err != nil {
		return nil, err
	}
	o.EnsureDefaults()
	if err := o.Validate(); err != nil {
		return nil, err
	}
	db.mu.Lock()
	defer db.mu.Unlock()
	if db.closed {
		return nil, ErrClosed
	}
	if _, ok := db.cols[name]; ok {
		return nil, fmt.Errorf("%w: %q", ErrExists, name)
	}
	fs := db.o.FS
	if err, ok := db.broken[name]; ok {
		// Its directory holds data that could not be opened: never
		// replaced by a new collection.
		return nil, fmt.Errorf("%w: %q: %w", ErrUnavailable, name, err)
	}
	p := filepath.Join(db.dir, collectionsDir, name)
	if err := vfs.RemoveAll(fs, p); err != nil { // leftovers of an unfinished create
		return nil, fmt.Errorf("engine: create %q: %w", name, err)
	}
	if err := vfs.MkdirAllDurable(fs, p); err != nil {
		return nil, fmt.Errorf("engine: create %q: %w", name, err)
	}
	c, err := openCollection(db, name, p, o)
	if err != nil {
		return nil, err
	}
	cfg := config{FormatVersion: configVersion, Name: name, Options: o}
	err = vfs.WriteFileAtomic(fs, filepath.Join(p, configFile), func(w io.Writer) error {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(cfg)
	})
	if err != nil {
		_ = c.close()
		_ = vfs.RemoveAll(fs, p)
		return nil, fmt.Errorf("engine: create %q: write config: %w", name, err)
	}
	db.cols[name] = c
	return c, nil
}

// Collection returns the open collection name, or ErrUnavailable (with
// the reason) for one Open could not open, or ErrNotFound.
func (db *DB) Collection(name string) (*Collection, error) {
	db.mu.Lock()
	defer db.mu.Unlock()
	if db.closed {
		return nil, ErrClosed
	}
	c, ok := db.cols[name]
	if !ok {
		if err, ok := db.broken[name]; ok {
			return nil, fmt.Errorf("%w: collection %q: %w", ErrUnavailable, name, err)
		}
		return nil, fmt.Errorf("%w: collection %q", ErrNotFound, name)
	}
	return c, nil
}

// Collections returns the names of the open collections, sorted.
func (db *DB) Collections() []string {
	db.mu.Lock()
	defer db.mu.Unlock()
	names := make([]string, 0, len(db.cols))
	for n := range db.cols {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// DropCollection closes collection name and deletes its directory: it is
// renamed away first (atomic), so a crash leaves it either present or gone;
// Open finishes an interrupted removal. Later calls on the dropped
// *Collection return ErrClosed. An unavailable collection is not dropped
// (ErrUnavailable).
func (db *DB) DropCollection(name string) error {
	db.mu.Lock()
	defer db.mu.Unlock()
	if db.closed {
		return ErrClosed
	}
	c, ok := db.cols[name]
	if !ok {
		if err, ok := db.broken[name]; ok {
			// Not deleted through the API: an operator inspects it
			// (searchd inspect) and restores or removes it by hand.
			return fmt.Errorf("%w: collection %q: %w", ErrUnavailable, name, err)
		}
		return fmt.Errorf("%w: collection %q", ErrNotFound, name)
	}
	delete(db.cols, name)
	cerr := c.close()
	fs := db.o.FS
	root := filepath.Join(db.dir, collectionsDir)
	tmp := filepath.Join(root, dropPrefix+name)
	_ = vfs.RemoveAll(fs, tmp)
	if err := fs.Rename(c.dir, tmp); err != nil {
		return fmt.Errorf("engine: drop %q: %w", name, errors.Join(err, cerr))
	}
	if err := vfs.SyncDir(fs, root); err != nil {
		return fmt.Errorf("engine: drop %q: %w", name, err)
	}
	if err := vfs.RemoveAll(fs, tmp); err != nil {
		return fmt.Errorf("engine: drop %q: %w", name, err)
	}
	if err := vfs.SyncDir(fs, root); err != nil {
		return fmt.Errorf("engine: drop %q: %w", name, err)
	}
	return nil
}

// Close closes every collection (syncing its WAL). Later calls return
// ErrClosed; Close itself is idempotent.
func (db *DB) Close() error {
	db.mu.Lock()
	defer db.mu.Unlock()
	if db.closed {
		return nil
	}
	db.closed = true
	return db.closeAll()
}

func (db *DB) closeAll() error {
	var errs []error
	for n, c := range db.cols {
		if err := c.close(); err != nil {
			errs = append(errs, fmt.Errorf("engine: close %q: %w", n, err))
		}
		delete(db.cols, n)
	}
	return errors.Join(errs...)
}
