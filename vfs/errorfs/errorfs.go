// Package errorfs wraps a vfs.FS and fails chosen operations, to test that
// storage code reports I/O errors instead of losing acknowledged data
// (modelled on pebble's vfs/errorfs: a two-method Injector decides, per
// operation, whether it fails).
package errorfs

import (
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"strings"
	"sync"

	"github.com/stratasearch/strata/vfs"
)

// ErrInjected is the error an Injector returns by default. Wrapped errors
// satisfy errors.Is(err, ErrInjected).
var ErrInjected = errors.New("errorfs: injected error")

// OpKind names a file-system operation.
type OpKind uint8

const (
	OpCreate OpKind = iota + 1
	OpOpen
	OpOpenReadWrite
	OpOpenDir
	OpRemove
	OpRename
	OpMkdirAll
	OpList
	OpStat
	OpLock
	OpWrite
	OpRead
	OpSync    // File.Sync on a file
	OpSyncDir // File.Sync on a directory handle from OpenDir
	OpTruncate
	OpClose
)

var opNames = [...]string{"?", "create", "open", "open-rw", "opendir", "remove", "rename", "mkdirall", "list", "stat", "lock", "write", "read", "sync", "syncdir", "truncate", "close"}

func (k OpKind) String() string {
	if int(k) < len(opNames) {
		return opNames[k]
	}
	return fmt.Sprintf("OpKind(%d)", k)
}

// Op is one operation about to run.
type Op struct {
	Kind OpKind
	Path string
}

func (o Op) String() string { return o.Kind.String() + "(" + o.Path + ")" }

// Injector decides whether an operation fails. MaybeError is called before
// the operation runs; a non-nil result is returned instead and the wrapped
// FS is not touched (a failed write writes nothing, a failed sync syncs
// nothing). Implementations must be safe for concurrent use.
type Injector interface {
	String() string
	MaybeError(Op) error
}

// Wrap returns fs with inj consulted before every operation.
func Wrap(fs vfs.FS, inj Injector) vfs.FS { return &errFS{fs: fs, inj: inj} }

type errFS struct {
	fs  vfs.FS
	inj Injector
}

func (e *errFS) check(k OpKind, path string) error {
	if err := e.inj.MaybeError(Op{Kind: k, Path: path}); err != nil {
		return fmt.Errorf("%s %s: %w", k, path, err)
	}
	return nil
}

func (e *errFS) wrap(f vfs.File, err error, path string, dir bool) (vfs.File, error) {
	if err != nil {
		return nil, err
	}
	return &errFile{f: f, fs: e, path: path, dir: dir}, nil
}

func (e *errFS) Create(name string) (vfs.File, error) {
	if err := e.check(OpCreate, name); err != nil {
		return nil, err
	}
	f, err := e.fs.Create(name)
	return e.wrap(f, err, name, false)
}
func (e *errFS) Open(name string) (vfs.File, error) {
	if err := e.check(OpOpen, name); err != nil {
		return nil, err
	}
	f, err := e.fs.Open(name)
	return e.wrap(f, err, name, false)
}
func (e *errFS) OpenReadWrite(name string) (vfs.File, error) {
	if err := e.check(OpOpenReadWrite, name); err != nil {
		return nil, err
	}
	f, err := e.fs.OpenReadWrite(name)
	return e.wrap(f, err, name, false)
}
func (e *errFS) OpenDir(name string) (vfs.File, error) {
	if err := e.check(OpOpenDir, name); err != nil {
		return nil, err
	}
	f, err := e.fs.OpenDir(name)
	return e.wrap(f, err, name, true)
}
func (e *errFS) Remove(name string) error {
	if err := e.check(OpRemove, name); err != nil {
		return err
	}
	return e.fs.Remove(name)
}
func (e *errFS) Rename(o, n string) error {
	if err := e.check(OpRename, o); err != nil {
		return err
	}
	return e.fs.Rename(o, n)
}
func (e *errFS) MkdirAll(name string, perm os.FileMode) error {
	if err := e.check(OpMkdirAll, name); err != nil {
		return err
	}
	return e.fs.MkdirAll(name, perm)
}
func (e *errFS) List(name string) ([]string, error) {
	if err := e.check(OpList, name); err != nil {
		return nil, err
	}
	return e.fs.List(name)
}
func (e *errFS) Stat(name string) (os.FileInfo, error) {
	if err := e.check(OpStat, name); err != nil {
		return nil, err
	}
	return e.fs.Stat(name)
}
func (e *errFS) Lock(name string) (io.Closer, error) {
	if err := e.check(OpLock, name); err != nil {
		return nil, err
	}
	return e.fs.Lock(name)
}

type errFile struct {
	f    vfs.File
	fs   *errFS
	path string
	dir  bool
}

func (f *errFile) Write(p []byte) (int, error) {
	if err := f.fs.check(OpWrite, f.path); err != nil {
		return 0, err
	}
	return f.f.Write(p)
}
func (f *errFile) Read(p []byte) (int, error) {
	if err := f.fs.check(OpRead, f.path); err != nil {
		return 0, err
	}
	return f.f.Read(p)
}
func (f *errFile) ReadAt(p []byte, off int64) (int, error) {
	if err := f.fs.check(OpRead, f.path); err != nil {
		return 0, err
	}
	return f.f.ReadAt(p, off)
}
func (f *errFile) Sync() error {
	k := OpSync
	if f.dir {
		k = OpSyncDir
	}
	if err := f.fs.check(k, f.path); err != nil {
		return err
	}
	return f.f.Sync()
}
func (f *errFile) Truncate(size int64) error {
	if err := f.fs.check(OpTruncate, f.path); err != nil {
		return err
	}
	return f.f.Truncate(size)
}
func (f *errFile) Stat() (os.FileInfo, error) { return f.f.Stat() }
func (f *errFile) Close() error {
	if err := f.fs.check(OpClose, f.path); err != nil {
		f.f.Close()
		return err
	}
	return f.f.Close()
}

func kindSet(kinds []OpKind) map[OpKind]bool {
	m := map[OpKind]bool{}
	for _, k := range kinds {
		m[k] = true
	}
	return m
}

func kindsString(m map[OpKind]bool) string {
	if len(m) == 0 {
		return "any"
	}
	var s []string
	for k := OpCreate; k <= OpClose; k++ {
		if m[k] {
			s = append(s, k.String())
		}
	}
	return strings.Join(s, "|")
}

// OnIndex fails the n-th (0-based) operation whose kind is in kinds (any
// kind if kinds is empty), and only that one. Count reports how many
// matching operations were seen.
func OnIndex(n int64, kinds ...OpKind) *IndexInjector {
	return &IndexInjector{n: n, kinds: kindSet(kinds)}
}

// IndexInjector fails the n-th matching operation; see OnIndex.
type IndexInjector struct {
	mu       sync.Mutex
	n, count int64
	kinds    map[OpKind]bool
	fired    bool
	// Sticky, if set before use, fails every matching operation from the
	// n-th on instead of only the n-th (a device that stays broken).
	Sticky bool
}

func (i *IndexInjector) String() string {
	return fmt.Sprintf("on-index(%d, %s, sticky=%v)", i.n, kindsString(i.kinds), i.Sticky)
}

func (i *IndexInjector) MaybeError(op Op) error {
	if len(i.kinds) > 0 && !i.kinds[op.Kind] {
		return nil
	}
	i.mu.Lock()
	defer i.mu.Unlock()
	c := i.count
	i.count++
	if c == i.n || (i.Sticky && c > i.n) {
		i.fired = true
		return ErrInjected
	}
	return nil
}

// Fired reports whether the injector has returned an error.
func (i *IndexInjector) Fired() bool { i.mu.Lock(); defer i.mu.Unlock(); return i.fired }

// Count returns the number of matching operations seen so far.
func (i *IndexInjector) Count() int64 { i.mu.Lock(); defer i.mu.Unlock(); return i.count }

// Randomly fails each operation whose kind is in kinds (any if empty) with
// probability p, drawn from a PCG seeded with seed (deterministic for a
// deterministic sequence of operations).
func Randomly(p float64, seed uint64, kinds ...OpKind) Injector {
	return &randInjector{p: p, seed: seed, rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)), kinds: kindSet(kinds)}
}

type randInjector struct {
	mu    sync.Mutex
	p     float64
	seed  uint64
	rng   *rand.Rand
	kinds map[OpKind]bool
}

func (r *randInjector) String() string {
	return fmt.Sprintf("randomly(p=%g, seed=%d, %s)", r.p, r.seed, kindsString(r.kinds))
}

func (r *randInjector) MaybeError(op Op) error {
	if len(r.kinds) > 0 && !r.kinds[op.Kind] {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.rng.Float64() < r.p {
		return ErrInjected
	}
	return nil
}

// InjectorFunc adapts a function (with a name for String) to Injector.
type InjectorFunc struct {
	Name string
	Fn   func(Op) error
}

func (f InjectorFunc) String() string         { return f.Name }
func (f InjectorFunc) MaybeError(op Op) error { return f.Fn(op) }
