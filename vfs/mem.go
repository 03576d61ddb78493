package vfs

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path"
	"sort"
	"strings"
	"sync"
	"time"
)

// MemFS is an in-memory FS that remembers what has been made durable, so a
// test can "crash" it (CrashClone) and reopen a store on what a real disk
// would hold after power loss. The model (strict, like pebble's
// NewCrashableMem):
//
//   - a file's data is durable up to the last File.Sync on it: Sync records
//     a snapshot of the whole content (the "synced data");
//   - a directory entry (file creation, rename, removal, sub-directory
//     creation) is durable only after File.Sync on a handle from OpenDir of
//     its parent; that records the parent's current entry set;
//   - CrashClone rebuilds the tree from the synced entry sets, each file with
//     its synced data. Everything else is lost.
//
// All paths are slash-separated and relative to a single root ("/" and ""
// name the root). Operations are serialised by one mutex.
type MemFS struct {
	mu    sync.Mutex
	root  *memNode
	locks map[string]bool

	dropped CrashStats // set on the FS returned by CrashClone
}

type memNode struct {
	isDir   bool
	modTime time.Time

	// files
	data       []byte
	syncedData []byte // shares data's backing array while data only grows

	// directories
	children       map[string]*memNode
	syncedChildren map[string]*memNode
}

// CrashStats counts what a CrashClone dropped.
type CrashStats struct {
	// UnsyncedBytes is the number of file bytes written but not synced
	// that the clone does not contain.
	UnsyncedBytes int64
	// Entries counts directory entries that differed between the live
	// and the synced entry sets (created, renamed or removed without a
	// directory sync).
	Entries int
}

// Any reports whether anything at all was dropped.
func (c CrashStats) Any() bool { return c.UnsyncedBytes > 0 || c.Entries > 0 }

// NewCrashableMem returns an empty MemFS whose root directory exists and is
// durable.
func NewCrashableMem() *MemFS {
	return &MemFS{root: newDir(), locks: map[string]bool{}}
}

func newDir() *memNode {
	return &memNode{isDir: true, children: map[string]*memNode{}, syncedChildren: map[string]*memNode{}, modTime: time.Now()}
}

var _ FS = (*MemFS)(nil)

// CrashOptions tune CrashCloneWith.
type CrashOptions struct {
	// Rand, if set, decides per file what part of its unsynced appended
	// tail reached the disk anyway: none, a random prefix (a torn write),
	// or all of it, each with probability 1/3. Nil keeps exactly the
	// synced data.
	Rand *rand.Rand
	// Process models the crash of the process alone (kill -9), not of
	// the machine: the kernel keeps every completed write and directory
	// change, synced or not, so the clone holds everything written. Rand
	// is then ignored.
	Process bool
}

// CrashClone returns a new MemFS holding only what was durable: synced
// directory entries and synced file data. The receiver is unchanged and
// may keep running. DroppedStats on the clone reports what was lost.
func (y *MemFS) CrashClone() *MemFS { return y.CrashCloneWith(CrashOptions{}) }

// CrashCloneWith is CrashClone with options (torn unsynced tails).
func (y *MemFS) CrashCloneWith(o CrashOptions) *MemFS {
	y.mu.Lock()
	defer y.mu.Unlock()
	c := &MemFS{locks: map[string]bool{}}
	c.root = y.cloneDir(y.root, o, &c.dropped)
	return c
}

// DroppedStats reports what the CrashClone that produced y dropped (zero
// for an FS not made by CrashClone).
func (y *MemFS) DroppedStats() CrashStats { return y.dropped }

func (y *MemFS) cloneDir(n *memNode, o CrashOptions, st *CrashStats) *memNode {
	d := newDir()
	if o.Process {
		for name, child := range n.children {
			var cc *memNode
			if child.isDir {
				cc = y.cloneDir(child, o, st)
			} else {
				data := append([]byte(nil), child.data...)
				cc = &memNode{data: data, syncedData: data[:len(data):len(data)], modTime: child.modTime}
			}
			d.children[name] = cc
			d.syncedChildren[name] = cc
		}
		return d
	}
	for name, child := range n.children {
		if n.syncedChildren[name] != child {
			st.Entries++
		}
	}
	for name, child := range n.syncedChildren {
		if n.children[name] != child {
			st.Entries++
		}
		var cc *memNode
		if child.isDir {
			cc = y.cloneDir(child, o, st)
		} else {
			data := append([]byte(nil), child.syncedData...)
			if o.Rand != nil && len(child.data) > len(data) &&
				string(child.data[:len(data)]) == string(data) {
				var keep int
				switch o.Rand.IntN(3) {
				case 1: // torn: a random prefix reached the disk
					keep = o.Rand.IntN(len(child.data) - len(data) + 1)
				case 2: // the whole write reached the disk, unsynced
					keep = len(child.data) - len(data)
				}
				data = append(data, child.data[len(data):len(data)+keep]...)
			}
			if len(child.data) > len(data) {
				st.UnsyncedBytes += int64(len(child.data) - len(data))
			} else if string(child.data) != string(data) {
				st.UnsyncedBytes += int64(len(data))
			}
			cc = &memNode{data: data, syncedData: data[:len(data):len(data)], modTime: child.modTime}
		}
		d.children[name] = cc
		d.syncedChildren[name] = cc
	}
	return d
}

// String dumps the tree (live view) for debugging.
func (y *MemFS) String() string {
	y.mu.Lock()
	defer y.mu.Unlock()
	var b strings.Builder
	var dump func(n *memNode, name string, level int)
	dump = func(n *memNode, name string, level int) {
		b.WriteString(strings.Repeat("  ", level))
		if n.isDir {
			fmt.Fprintf(&b, "%s/\n", name)
			names := make([]string, 0, len(n.children))
			for k := range n.children {
				names = append(names, k)
			}
			sort.Strings(names)
			for _, k := range names {
				dump(n.children[k], k, level+1)
			}
			return
		}
		fmt.Fprintf(&b, "%s (%d bytes, %d synced)\n", name, len(n.data), len(n.syncedData))
	}
	dump(y.root, "", 0)
	return b.String()
}

func splitPath(name string) []string {
	name = path.Clean("/" + strings.ReplaceAll(name, string(os.PathSeparator), "/"))
	if name == "/" {
		return nil
	}
	return strings.Split(name[1:], "/")
}

// lookupParent returns the directory holding name and the final element.
// Called with y.mu held.
func (y *MemFS) lookupParent(op, name string) (*memNode, string, error) {
	parts := splitPath(name)
	if len(parts) == 0 {
		return nil, "", &fs.PathError{Op: op, Path: name, Err: errors.New("vfs: invalid name (root)")}
	}
	dir := y.root
	for _, p := range parts[:len(parts)-1] {
		c := dir.children[p]
		if c == nil {
			return nil, "", &fs.PathError{Op: op, Path: name, Err: fs.ErrNotExist}
		}
		if !c.isDir {
			return nil, "", &fs.PathError{Op: op, Path: name, Err: errors.New("vfs: not a directory")}
		}
		dir = c
	}
	return dir, parts[len(parts)-1], nil
}

func (y *MemFS) lookup(op, name string) (*memNode, error) {
	parts := splitPath(name)
	if len(parts) == 0 {
		return y.root, nil
	}
	dir, base, err := y.lookupParent(op, name)
	if err != nil {
		return nil, err
	}
	n := dir.children[base]
	if n == nil {
		return nil, &fs.PathError{Op: op, Path: name, Err: fs.ErrNotExist}
	}
	return n, nil
}

func (y *MemFS) Create(name string) (File, error) {
	y.mu.Lock()
	defer y.mu.Unlock()
	dir, base, err := y.lookupParent("create", name)
	if err != nil {
		return nil, err
	}
	if c := dir.children[base]; c != nil && c.isDir {
		return nil, &fs.PathError{Op: "create", Path: name, Err: errors.New("vfs: is a directory")}
	}
	// A new inode: the old one (if any) stays reachable from the synced
	// entry set until the directory is synced, like O_TRUNC on a
	// replaced file would not be; we model create as a fresh file.
	n := &memNode{modTime: time.Now()}
	dir.children[base] = n
	return &memFile{fs: y, n: n, name: base, read: true, write: true}, nil
}

func (y *MemFS) Open(name string) (File, error) { return y.open(name, false) }

func (y *MemFS) OpenReadWrite(name string) (File, error) { return y.open(name, true) }

// open opens an existing file for reading, and for writing too if write.
func (y *MemFS) open(name string, write bool) (File, error) {
	y.mu.Lock()
	defer y.mu.Unlock()
	n, err := y.lookup("open", name)
	if err != nil {
		return nil, err
	}
	if n.isDir {
		return nil, &fs.PathError{Op: "open", Path: name, Err: errors.New("vfs: is a directory (use OpenDir)")}
	}
	return &memFile{fs: y, n: n, name: path.Base(name), read: true, write: write}, nil
}

func (y *MemFS) OpenDir(name string) (File, error) {
	y.mu.Lock()
	defer y.mu.Unlock()
	n, err := y.lookup("opendir", name)
	if err != nil {
		return nil, err
	}
	if !n.isDir {
		return nil, &fs.PathError{Op: "opendir", Path: name, Err: errors.New("vfs: not a directory")}
	}
	return &memFile{fs: y, n: n, name: path.Base(name), read: true}, nil
}

func (y *MemFS) Remove(name string) error {
	y.mu.Lock()
	defer y.mu.Unlock()
	dir, base, err := y.lookupParent("remove", name)
	if err != nil {
		return err
	}
	n := dir.children[base]
	if n == nil {
		return &fs.PathError{Op: "remove", Path: name, Err: fs.ErrNotExist}
	}
	if n.isDir && len(n.children) > 0 {
		return &fs.PathError{Op: "remove", Path: name, Err: errors.New("vfs: directory not empty")}
	}
	delete(dir.children, base)
	return nil
}

func (y *MemFS) Rename(oldname, newname string) error {
	y.mu.Lock()
	defer y.mu.Unlock()
	odir, obase, err := y.lookupParent("rename", oldname)
	if err != nil {
		return err
	}
	n := odir.children[obase]
	if n == nil {
		return &fs.PathError{Op: "rename", Path: oldname, Err: fs.ErrNotExist}
	}
	ndir, nbase, err := y.lookupParent("rename", newname)
	if err != nil {
		return err
	}
	if c := ndir.children[nbase]; c != nil && c.isDir != n.isDir {
		return &fs.PathError{Op: "rename", Path: newname, Err: errors.New("vfs: file/directory mismatch")}
	}
	delete(odir.children, obase)
	ndir.children[nbase] = n
	return nil
}

func (y *MemFS) MkdirAll(name string, perm os.FileMode) error {
	y.mu.Lock()
	defer y.mu.Unlock()
	dir := y.root
	for _, p := range splitPath(name) {
		c := dir.children[p]
		if c == nil {
			c = newDir()
			dir.children[p] = c
		} else if !c.isDir {
			return &fs.PathError{Op: "mkdir", Path: name, Err: errors.New("vfs: not a directory")}
		}
		dir = c
	}
	return nil
}

func (y *MemFS) List(name string) ([]string, error) {
	y.mu.Lock()
	defer y.mu.Unlock()
	n, err := y.lookup("list", name)
	if err != nil {
		return nil, err
	}
	if !n.isDir {
		return nil, &fs.PathError{Op: "list", Path: name, Err: errors.New("vfs: not a directory")}
	}
	out := make([]string, 0, len(n.children))
	for k := range n.children {
		out = append(out, k)
	}
	return out, nil
}

func (y *MemFS) Stat(name string) (os.FileInfo, error) {
	y.mu.Lock()
	defer y.mu.Unlock()
	n, err := y.lookup("stat", name)
	if err != nil {
		return nil, err
	}
	return memInfo{name: path.Base(path.Clean("/" + name)), size: int64(len(n.data)), dir: n.isDir, mod: n.modTime}, nil
}

type memLock struct {
	fs   *MemFS
	name string
	once sync.Once
}

func (l *memLock) Close() error {
	l.once.Do(func() {
		l.fs.mu.Lock()
		delete(l.fs.locks, l.name)
		l.fs.mu.Unlock()
	})
	return nil
}

// Lock is an in-process lock (other processes cannot see this memory).
func (y *MemFS) Lock(name string) (io.Closer, error) {
	key := path.Clean("/" + name)
	y.mu.Lock()
	defer y.mu.Unlock()
	if y.locks[key] {
		return nil, fmt.Errorf("%w: %s", ErrLocked, name)
	}
	y.locks[key] = true
	return &memLock{fs: y, name: key}, nil
}

type memInfo struct {
	name string
	size int64
	dir  bool
	mod  time.Time
}

func (i memInfo) Name() string { return i.name }
func (i memInfo) Size() int64  { return i.size }
func (i memInfo) Mode() os.FileMode {
	if i.dir {
		return os.ModeDir | 0o755
	}
	return 0o644
}
func (i memInfo) ModTime() time.Time { return i.mod }
func (i memInfo) IsDir() bool        { return i.dir }
func (i memInfo) Sys() any           { return nil }

type memFile struct {
	fs          *MemFS
	n           *memNode
	name        string
	rpos        int64
	read, write bool
	closed      bool
}

var errClosed = errors.New("vfs: file already closed")

func (f *memFile) Write(p []byte) (int, error) {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if f.closed {
		return 0, errClosed
	}
	if !f.write || f.n.isDir {
		return 0, errors.New("vfs: file not open for writing")
	}
	f.n.data = append(f.n.data, p...)
	f.n.modTime = time.Now()
	return len(p), nil
}

func (f *memFile) Read(p []byte) (int, error) {
	n, err := f.ReadAt(p, f.rpos)
	f.rpos += int64(n)
	if err == io.EOF && n > 0 {
		err = nil
	}
	return n, err
}

func (f *memFile) ReadAt(p []byte, off int64) (int, error) {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if f.closed {
		return 0, errClosed
	}
	if f.n.isDir {
		return 0, errors.New("vfs: cannot read a directory")
	}
	if off < 0 {
		return 0, errors.New("vfs: negative offset")
	}
	if off >= int64(len(f.n.data)) {
		return 0, io.EOF
	}
	n := copy(p, f.n.data[off:])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

func (f *memFile) Sync() error {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if f.closed {
		return errClosed
	}
	if f.n.isDir {
		f.n.syncedChildren = make(map[string]*memNode, len(f.n.children))
		for k, v := range f.n.children {
			f.n.syncedChildren[k] = v
		}
		return nil
	}
	f.n.syncedData = f.n.data[:len(f.n.data):len(f.n.data)]
	return nil
}

func (f *memFile) Truncate(size int64) error {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if f.closed {
		return errClosed
	}
	if !f.write || f.n.isDir {
		return errors.New("vfs: file not open for writing")
	}
	if size < 0 {
		return errors.New("vfs: negative size")
	}
	// Copy so later appends never overwrite bytes the synced snapshot
	// still shares.
	nd := make([]byte, size)
	copy(nd, f.n.data)
	f.n.data = nd
	return nil
}

func (f *memFile) Stat() (os.FileInfo, error) {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	return memInfo{name: f.name, size: int64(len(f.n.data)), dir: f.n.isDir, mod: f.n.modTime}, nil
}

func (f *memFile) Close() error {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if f.closed {
		return errClosed
	}
	f.closed = true
	return nil
}
