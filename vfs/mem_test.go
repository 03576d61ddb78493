package vfs

import (
	"errors"
	"io"
	"io/fs"
	"math/rand/v2"
	"sort"
	"testing"
)

func readAll(t *testing.T, y FS, name string) string {
	t.Helper()
	f, err := y.Open(name)
	if err != nil {
		t.Fatalf("open %s: %v", name, err)
	}
	defer f.Close()
	b, err := io.ReadAll(f)
	if err != nil {
		t.Fatalf("read %s: %v", name, err)
	}
	return string(b)
}

func exists(y FS, name string) bool {
	_, err := y.Stat(name)
	return err == nil
}

func write(t *testing.T, f File, s string) {
	t.Helper()
	if _, err := f.Write([]byte(s)); err != nil {
		t.Fatal(err)
	}
}

func mustSync(t *testing.T, f File) {
	t.Helper()
	if err := f.Sync(); err != nil {
		t.Fatal(err)
	}
}

func mustSyncDir(t *testing.T, y FS, dir string) {
	t.Helper()
	if err := SyncDir(y, dir); err != nil {
		t.Fatal(err)
	}
}

func TestCrashDropsUnsyncedData(t *testing.T) {
	m := NewCrashableMem()
	if err := m.MkdirAll("/db", 0o755); err != nil {
		t.Fatal(err)
	}
	mustSyncDir(t, m, "/")
	f, err := m.Create("/db/a")
	if err != nil {
		t.Fatal(err)
	}
	mustSyncDir(t, m, "/db")
	write(t, f, "hello ")
	mustSync(t, f)
	write(t, f, "world")

	if got := readAll(t, m, "/db/a"); got != "hello world" {
		t.Fatalf("live view = %q", got)
	}
	c := m.CrashClone()
	if got := readAll(t, c, "/db/a"); got != "hello " {
		t.Fatalf("after crash = %q, want only the synced %q", got, "hello ")
	}
	if st := c.DroppedStats(); st.UnsyncedBytes != 5 || st.Entries != 0 {
		t.Fatalf("dropped stats = %+v, want 5 unsynced bytes, 0 entries", st)
	}
	// The live FS is unaffected and keeps going.
	mustSync(t, f)
	if got := readAll(t, m.CrashClone(), "/db/a"); got != "hello world" {
		t.Fatalf("after second sync + crash = %q", got)
	}
	// The clone is independent of the original.
	write(t, f, "!")
	if got := readAll(t, c, "/db/a"); got != "hello " {
		t.Fatalf("clone changed by a write to the original: %q", got)
	}
}

func TestCrashCreateWithoutDirSyncLost(t *testing.T) {
	m := NewCrashableMem()
	f, err := m.Create("/a")
	if err != nil {
		t.Fatal(err)
	}
	write(t, f, "data")
	mustSync(t, f) // data synced, but not the directory entry
	c := m.CrashClone()
	if exists(c, "/a") {
		t.Fatal("file whose directory entry was never synced survived the crash")
	}
	if c.DroppedStats().Entries != 1 {
		t.Fatalf("stats %+v", c.DroppedStats())
	}
	mustSyncDir(t, m, "/")
	if got := readAll(t, m.CrashClone(), "/a"); got != "data" {
		t.Fatalf("got %q", got)
	}
}

func TestCrashMkdirNeedsParentSync(t *testing.T) {
	m := NewCrashableMem()
	if err := m.MkdirAll("/x/y", 0o755); err != nil {
		t.Fatal(err)
	}
	mustSyncDir(t, m, "/x") // y's entry in x is durable, but x itself is not in /
	if exists(m.CrashClone(), "/x") {
		t.Fatal("directory survived without its parent being synced")
	}
	mustSyncDir(t, m, "/")
	c := m.CrashClone()
	if !exists(c, "/x/y") {
		t.Fatal("synced directory chain lost")
	}
}

func TestCrashRenameWithoutDirSyncLost(t *testing.T) {
	m := NewCrashableMem()
	f, _ := m.Create("/tmp-file")
	write(t, f, "v2")
	mustSync(t, f)
	mustSyncDir(t, m, "/")
	if err := m.Rename("/tmp-file", "/CURRENT"); err != nil {
		t.Fatal(err)
	}
	c := m.CrashClone()
	if exists(c, "/CURRENT") || !exists(c, "/tmp-file") {
		t.Fatal("rename without a directory sync was durable")
	}
	mustSyncDir(t, m, "/")
	c = m.CrashClone()
	if !exists(c, "/CURRENT") || exists(c, "/tmp-file") {
		t.Fatal("rename after directory sync not durable")
	}
	if got := readAll(t, c, "/CURRENT"); got != "v2" {
		t.Fatalf("got %q", got)
	}
}

func TestCrashRemoveWithoutDirSyncResurrects(t *testing.T) {
	m := NewCrashableMem()
	f, _ := m.Create("/a")
	write(t, f, "old")
	mustSync(t, f)
	mustSyncDir(t, m, "/")
	if err := m.Remove("/a"); err != nil {
		t.Fatal(err)
	}
	if exists(m, "/a") {
		t.Fatal("removed file still visible")
	}
	if got := readAll(t, m.CrashClone(), "/a"); got != "old" {
		t.Fatalf("unsynced remove: got %q, want resurrected %q", got, "old")
	}
	mustSyncDir(t, m, "/")
	if exists(m.CrashClone(), "/a") {
		t.Fatal("synced remove undone by crash")
	}
}

func TestCrashTruncateAfterSync(t *testing.T) {
	m := NewCrashableMem()
	f, _ := m.Create("/a")
	mustSyncDir(t, m, "/")
	write(t, f, "abcdef")
	mustSync(t, f)
	if err := f.Truncate(2); err != nil {
		t.Fatal(err)
	}
	write(t, f, "XY")
	if got := readAll(t, m, "/a"); got != "abXY" {
		t.Fatalf("live %q", got)
	}
	if got := readAll(t, m.CrashClone(), "/a"); got != "abcdef" {
		t.Fatalf("crash after unsynced truncate: %q, want synced %q", got, "abcdef")
	}
	mustSync(t, f)
	if got := readAll(t, m.CrashClone(), "/a"); got != "abXY" {
		t.Fatalf("%q", got)
	}
}

func TestCrashTornTailIsPrefix(t *testing.T) {
	m := NewCrashableMem()
	f, _ := m.Create("/a")
	mustSyncDir(t, m, "/")
	write(t, f, "synced|")
	mustSync(t, f)
	write(t, f, "0123456789")
	rng := rand.New(rand.NewPCG(1, 2))
	seen := map[int]bool{}
	for i := 0; i < 200; i++ {
		got := readAll(t, m.CrashCloneWith(CrashOptions{Rand: rng}), "/a")
		full := "synced|0123456789"
		if len(got) < 7 || got != full[:len(got)] {
			t.Fatalf("torn clone %q is not a prefix of %q that keeps the synced part", got, full)
		}
		seen[len(got)] = true
	}
	if len(seen) < 5 {
		t.Fatalf("torn tails not random enough: lengths %v", seen)
	}
}

func TestMemBasics(t *testing.T) {
	m := NewCrashableMem()
	if err := m.MkdirAll("/d/e", 0o755); err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"/d/b", "/d/a"} {
		f, err := m.Create(n)
		if err != nil {
			t.Fatal(err)
		}
		write(t, f, n)
		f.Close()
	}
	names, err := m.List("/d")
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(names)
	if len(names) != 3 || names[0] != "a" || names[1] != "b" || names[2] != "e" {
		t.Fatalf("list = %v", names)
	}
	if _, err := m.Open("/d/zz"); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("open missing: %v", err)
	}
	st, err := m.Stat("/d/a")
	if err != nil || st.Size() != 4 || st.IsDir() {
		t.Fatalf("stat %v %v", st, err)
	}
	f, _ := m.Open("/d/a")
	buf := make([]byte, 2)
	if n, err := f.ReadAt(buf, 2); n != 2 || err != nil || string(buf) != "/a" {
		t.Fatalf("ReadAt = %d %v %q", n, err, buf)
	}
	if _, err := f.Write([]byte("x")); err == nil {
		t.Fatal("write to read-only handle succeeded")
	}
	f.Close()
	if err := f.Close(); err == nil {
		t.Fatal("double close succeeded")
	}
	rw, err := m.OpenReadWrite("/d/a")
	if err != nil {
		t.Fatal(err)
	}
	write(t, rw, "+")
	if got := readAll(t, m, "/d/a"); got != "/d/a+" {
		t.Fatalf("append via OpenReadWrite: %q", got)
	}
	if err := m.Remove("/d"); err == nil {
		t.Fatal("removed a non-empty directory")
	}
	l, err := m.Lock("/d/LOCK")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Lock("/d/LOCK"); !errors.Is(err, ErrLocked) {
		t.Fatalf("second lock: %v", err)
	}
	l.Close()
	l2, err := m.Lock("/d/LOCK")
	if err != nil {
		t.Fatal(err)
	}
	l2.Close()
}

func TestDefaultFS(t *testing.T) {
	dir := t.TempDir()
	y := Default
	name := dir + "/f"
	f, err := y.Create(name)
	if err != nil {
		t.Fatal(err)
	}
	write(t, f, "abc")
	mustSync(t, f)
	if err := f.Truncate(1); err != nil {
		t.Fatal(err)
	}
	write(t, f, "Z") // O_APPEND: goes to the new end
	f.Close()
	if got := readAll(t, y, name); got != "aZ" {
		t.Fatalf("got %q", got)
	}
	mustSyncDir(t, y, dir)
	if err := y.Rename(name, dir+"/g"); err != nil {
		t.Fatal(err)
	}
	names, _ := y.List(dir)
	if len(names) != 1 || names[0] != "g" {
		t.Fatalf("list %v", names)
	}
	l, err := y.Lock(dir + "/LOCK")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := y.Lock(dir + "/LOCK"); !errors.Is(err, ErrLocked) {
		t.Fatalf("second flock in the same process: %v", err)
	}
	l.Close()
}
