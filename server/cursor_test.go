package server

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/stratasearch/strata/engine"
)

// newAt opens a DB and a Server over dir, with the given key files written
// first (nil = absent).
func newAt(t *testing.T, dbKey, legacyKey []byte) (*Server, string) {
	t.Helper()
	dir := t.TempDir()
	if legacyKey != nil {
		os.MkdirAll(filepath.Join(dir, "server"), 0o755)
		if err := os.WriteFile(filepath.Join(dir, engine.LegacyCursorKeyFile), legacyKey, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if dbKey != nil {
		if err := os.WriteFile(filepath.Join(dir, engine.CursorKeyFile), dbKey, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	db, err := engine.Open(dir, engine.Options{Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	s, err := New(db, Options{DataDir: dir, Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s, dir
}

// TestListingCursorKey: listing cursors are signed with the DB's cursor
// key; those signed with the server's former key file stay valid whether
// the DB had a key of its own or not; no server key file is created.
func TestListingCursorKey(t *testing.T) {
	old := bytes.Repeat([]byte{3}, 32)
	dbKey := bytes.Repeat([]byte{4}, 32)
	oldCursor := (&cursorSigner{keys: [][]byte{old}}).encode("c", "p", "after-id")
	check := func(t *testing.T, s *Server, dir string, wantSign []byte, oldValid bool) {
		t.Helper()
		after, err := s.cursors.decode(oldCursor, "c", "p")
		if oldValid && (err != nil || after != "after-id") {
			t.Fatalf("cursor of the former server key: %q, %v", after, err)
		}
		if !oldValid && err == nil {
			t.Fatal("a cursor of an unknown key verified")
		}
		cur := s.cursors.encode("c", "p", "x")
		if got, err := (&cursorSigner{keys: [][]byte{wantSign}}).decode(cur, "c", "p"); err != nil || got != "x" {
			t.Fatalf("new cursors are not signed with the DB key: %v", err)
		}
		if b, err := os.ReadFile(filepath.Join(dir, engine.CursorKeyFile)); err != nil || !bytes.Equal(b, wantSign) {
			t.Fatalf("DB key file: %v", err)
		}
	}
	t.Run("fresh", func(t *testing.T) {
		s, dir := newAt(t, nil, nil)
		key, err := s.db.CursorKey()
		if err != nil {
			t.Fatal(err)
		}
		check(t, s, dir, key, false)
		if _, err := os.Stat(filepath.Join(dir, engine.LegacyCursorKeyFile)); !os.IsNotExist(err) {
			t.Fatalf("server key file created: %v", err)
		}
	})
	t.Run("only the former server key", func(t *testing.T) {
		s, dir := newAt(t, nil, old)
		check(t, s, dir, old, true) // adopted as the DB key
	})
	t.Run("both keys", func(t *testing.T) {
		s, dir := newAt(t, dbKey, old)
		check(t, s, dir, dbKey, true)
	})
	t.Run("damaged former key", func(t *testing.T) {
		s, dir := newAt(t, dbKey, []byte("short"))
		check(t, s, dir, dbKey, false)
	})
}
