package engine

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"

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
	// ErrCorrupt: a collection's config file is malformed (the message names
	// the file).
	ErrCorrupt = errors.New("engine: corrupt data")
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
	root := filepath.Join(dir, collectionsDir)
	if err := vfs.MkdirAllDurable(vfs.Default, root); err != nil {
		return nil, fmt.Errorf("engine: open %s: %w", dir, err)
	}
	db := &DB{dir: dir, o: o, cols: map[string]*Collection{}, broken: map[string]error{}}
	ents, err := os.ReadDir(root)
	if err != nil {
		return nil, fmt.Errorf("engine: open %s: %w", dir, err)
	}
	sort.Slice(ents, func(i, j int) bool { return ents[i].Name() < ents[j].Name() })
	for _, e := range ents {
		if !e.IsDir() {
			continue
		}
		p := filepath.Join(root, e.Name())
		if strings.HasPrefix(e.Name(), dropPrefix) {
			// A DropCollection interrupted after its rename: finish it.
			if err := os.RemoveAll(p); err != nil {
				db.closeAll()
				return nil, fmt.Errorf("engine: remove dropped collection %s: %w", p, err)
			}
			continue
		}
		cfg, err := readConfig(filepath.Join(p, configFile))
		if errors.Is(err, os.ErrNotExist) {
			// CreateCollection did not finish: no config was written.
			o.Logger.Warn("engine: ignoring collection directory without config", "dir", p)
			continue
		}
		if err != nil {
			db.markBroken(e.Name(), err)
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

func readConfig(path string) (config, error) {
	b, err := os.ReadFile(path)
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
		return cfg, fmt.Errorf("%w: %s: %v", ErrCorrupt, path, err)
	}
	if dec.More() {
		return cfg, fmt.Errorf("%w: %s: trailing data after the config object", ErrCorrupt, path)
	}
	if cfg.FormatVersion < 1 || cfg.FormatVersion > configVersion {
		return cfg, fmt.Errorf("%w: %s: format_version %d, this build reads 1..%d", ErrCorrupt, path, cfg.FormatVersion, configVersion)
	}
	if err := validateName(cfg.Name); err != nil || cfg.Name != filepath.Base(filepath.Dir(path)) {
		return cfg, fmt.Errorf("%w: %s: name %q does not match its directory", ErrCorrupt, path, cfg.Name)
	}
	cfg.Options.EnsureDefaults()
	if err := cfg.Options.Validate(); err != nil {
		return cfg, fmt.Errorf("%w: %s: %v", ErrCorrupt, path, err)
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
	if err, ok := db.broken[name]; ok {
		// Its directory holds data that could not be opened: never
		// replaced by a new collection.
		return nil, fmt.Errorf("%w: %q: %w", ErrUnavailable, name, err)
	}
	p := filepath.Join(db.dir, collectionsDir, name)
	if err := os.RemoveAll(p); err != nil { // leftovers of an unfinished create
		return nil, fmt.Errorf("engine: create %q: %w", name, err)
	}
	if err := vfs.MkdirAllDurable(vfs.Default, p); err != nil {
		return nil, fmt.Errorf("engine: create %q: %w", name, err)
	}
	c, err := openCollection(db, name, p, o)
	if err != nil {
		return nil, err
	}
	cfg := config{FormatVersion: configVersion, Name: name, Options: o}
	err = vfs.WriteFileAtomic(vfs.Default, filepath.Join(p, configFile), func(w io.Writer) error {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(cfg)
	})
	if err != nil {
		_ = c.close()
		_ = os.RemoveAll(p)
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
	root := filepath.Join(db.dir, collectionsDir)
	tmp := filepath.Join(root, dropPrefix+name)
	_ = os.RemoveAll(tmp)
	if err := os.Rename(c.dir, tmp); err != nil {
		return fmt.Errorf("engine: drop %q: %w", name, errors.Join(err, cerr))
	}
	if err := vfs.SyncDir(vfs.Default, root); err != nil {
		return fmt.Errorf("engine: drop %q: %w", name, err)
	}
	if err := os.RemoveAll(tmp); err != nil {
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
