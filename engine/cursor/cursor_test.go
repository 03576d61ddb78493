package cursor

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stratasearch/strata/vfs"
)

var testKey = []byte("0123456789abcdef0123456789abcdef")

func TestRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{0, 1, 7, 1000} {
		d := Data{Epoch: rng.Uint64(), Seen: make([]uint64, n)}
		for i := range d.Fingerprint {
			d.Fingerprint[i] = byte(rng.Uint32())
		}
		for i := range d.Seen {
			d.Seen[i] = rng.Uint64()
		}
		s := Encode(d, testKey)
		got, err := Decode(s, testKey)
		if err != nil {
			t.Fatalf("n=%d: %v", n, err)
		}
		if got.Epoch != d.Epoch || got.Fingerprint != d.Fingerprint || len(got.Seen) != n {
			t.Fatalf("n=%d: %+v != %+v", n, got, d)
		}
		for i := range d.Seen {
			if got.Seen[i] != d.Seen[i] {
				t.Fatalf("n=%d: seen[%d]", n, i)
			}
		}
		if _, err := Decode(s, bytes.Repeat([]byte{1}, KeySize)); err == nil || !strings.Contains(err.Error(), "signature") {
			t.Fatalf("another key: %v", err)
		}
	}
}

// TestLayout checks the documented byte layout against a cursor built by
// hand.
func TestLayout(t *testing.T) {
	d := Data{Epoch: 0x0102030405060708, Seen: []uint64{IDHash("a")}}
	d.Fingerprint[0], d.Fingerprint[15] = 0xAA, 0xBB
	b, err := decodeRaw(Encode(d, testKey))
	if err != nil {
		t.Fatal(err)
	}
	want := []byte{2, 8, 7, 6, 5, 4, 3, 2, 1, 0xAA, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xBB, 1, 0}
	h := IDHash("a")
	for i := 0; i < 8; i++ {
		want = append(want, byte(h>>(8*i)))
	}
	if len(b) != len(want)+16 || !bytes.Equal(b[:len(want)], want) {
		t.Fatalf("layout\n got %x\nwant %x + 16-byte MAC", b, want)
	}
	// FNV-1a-64 of "a" (the published test vector).
	if h != 0xaf63dc4c8601ec8c {
		t.Fatalf("IDHash(a) = %#x", h)
	}
}

func decodeRaw(s string) ([]byte, error) { return base64.RawURLEncoding.DecodeString(s) }

// encodeBody signs body as Encode does (HMAC-SHA256 truncated to 16
// bytes), whatever its content.
func encodeBody(body, key []byte) string {
	m := hmac.New(sha256.New, key)
	m.Write(body)
	return base64.RawURLEncoding.EncodeToString(append(append([]byte(nil), body...), m.Sum(nil)[:16]...))
}

func TestDecodeRefuses(t *testing.T) {
	good := Encode(Data{Epoch: 3, Seen: []uint64{9}}, testKey)
	b, _ := decodeRaw(good)
	resign := func(body []byte) string { return encodeBody(body, testKey) } // signed, another shape
	v1 := append([]byte(nil), b[:len(b)-16]...)
	v1[0] = 1
	count := append([]byte(nil), b[:len(b)-16]...)
	count[25] = 2
	for name, c := range map[string]struct {
		s, want string
	}{
		"not base64":  {"!!!", "base64url"},
		"padding":     {good + "=", "base64url"},
		"truncated":   {good[:10], "truncated"},
		"flipped MAC": {good[:len(good)-2] + "AA", "signature"},
		"version 1":   {resign(v1), "version 1"},
		"count":       {resign(count), "length"},
	} {
		if _, err := Decode(c.s, testKey); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", name, err, c.want)
		}
	}
}

func FuzzDecodeCursor(f *testing.F) {
	f.Add(Encode(Data{Epoch: 7, Seen: []uint64{1, 2, 3}}, testKey))
	f.Add(Encode(Data{}, testKey))
	f.Add("")
	f.Add("AAAA")
	f.Fuzz(func(t *testing.T, s string) {
		d, err := Decode(s, testKey)
		if err != nil {
			return
		}
		if got := Encode(d, testKey); got != s {
			t.Fatalf("a verified cursor does not re-encode to itself")
		}
	})
}

func TestLoadKey(t *testing.T) {
	for _, tc := range []struct {
		name string
		fs   vfs.FS
		dir  string
	}{{"os", vfs.Default, t.TempDir()}, {"mem", vfs.NewCrashableMem(), "/db"}} {
		t.Run(tc.name, func(t *testing.T) {
			fsys, dir := tc.fs, tc.dir
			if err := fsys.MkdirAll(filepath.Join(dir, "old"), 0o755); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(dir, "cursor.key")
			if _, err := ReadKey(fsys, path); !errors.Is(err, fs.ErrNotExist) {
				t.Fatalf("ReadKey of a missing file: %v", err)
			}
			// Created once, then read back unchanged.
			k1, err := LoadKey(fsys, path)
			if err != nil || len(k1) != KeySize {
				t.Fatalf("LoadKey: %d bytes, %v", len(k1), err)
			}
			if k2, err := LoadKey(fsys, path, filepath.Join(dir, "old", "key")); err != nil || !bytes.Equal(k1, k2) {
				t.Fatalf("second LoadKey differs: %v", err)
			}
			if tc.fs == vfs.Default {
				if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
					t.Fatalf("key file mode %v, %v", fi.Mode().Perm(), err)
				}
			}
			// A damaged key file is an error naming it, never replaced.
			put(t, fsys, path, []byte("short"))
			if _, err := LoadKey(fsys, path); !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "offset 0") {
				t.Fatalf("damaged key: %v", err)
			}
			if b, _ := vfs.ReadFile(fsys, path); string(b) != "short" {
				t.Fatalf("damaged key file rewritten: %q", b)
			}
			// A missing key file adopts the first valid older one.
			fsys.Remove(path)
			old := bytes.Repeat([]byte{5}, KeySize)
			bad := filepath.Join(dir, "old", "bad")
			put(t, fsys, bad, []byte("x"))
			put(t, fsys, filepath.Join(dir, "old", "key"), old)
			k3, err := LoadKey(fsys, path, filepath.Join(dir, "old", "none"), bad, filepath.Join(dir, "old", "key"))
			if err != nil || !bytes.Equal(k3, old) {
				t.Fatalf("adopt: %x, %v", k3, err)
			}
			if b, err := ReadKey(fsys, path); err != nil || !bytes.Equal(b, old) {
				t.Fatalf("adopted key not written: %v", err)
			}
		})
	}
}

func put(t *testing.T, fsys vfs.FS, path string, b []byte) {
	t.Helper()
	if err := vfs.WriteFileAtomic(fsys, path, func(w io.Writer) error { _, err := w.Write(b); return err }); err != nil {
		t.Fatal(err)
	}
}
