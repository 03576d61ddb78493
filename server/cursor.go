package server

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/stratasearch/strata/vfs"
)

// Listing cursors.
//
// GET /v1/collections/{name}/documents pages through live document ids in
// ascending byte order (keyset pagination over engine.Collection.List). The
// cursor is
//
//	base64url(JSON {"v":1,"c":collection,"p":principal,"a":after}) "." base64url(HMAC-SHA256(key, payload))
//
// with the 32-byte key in DataDir/server/cursor.key (created with
// crypto/rand on first start, mode 0600, written atomically). A cursor
// whose MAC does not verify, or that names another collection or principal,
// is a 400. Cursors carry no epoch: a page reads the newest epoch, so an id
// written between pages appears if it sorts after the cursor, and every id
// live throughout the walk appears exactly once.

type cursorPayload struct {
	V int    `json:"v"`
	C string `json:"c"`
	P string `json:"p"`
	A string `json:"a"`
}

type cursorSigner struct{ key []byte }

// loadCursorKey reads (or creates) the HMAC key.
func loadCursorKey(path string) (*cursorSigner, error) {
	data, err := os.ReadFile(path)
	if err == nil {
		if len(data) != 32 {
			return nil, fmt.Errorf("server: cursor key %s: %d bytes, want 32", path, len(data))
		}
		return &cursorSigner{key: data}, nil
	}
	if !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("server: cursor key: %w", err)
	}
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		return nil, fmt.Errorf("server: cursor key: %w", err)
	}
	if err := vfs.MkdirAllDurable(vfs.Default, filepath.Dir(path)); err != nil {
		return nil, fmt.Errorf("server: cursor key: %w", err)
	}
	if err := vfs.WriteFileAtomic(vfs.Default, path, func(w io.Writer) error {
		_, err := w.Write(key)
		return err
	}); err != nil {
		return nil, fmt.Errorf("server: cursor key: %w", err)
	}
	if err := os.Chmod(path, 0o600); err != nil {
		return nil, fmt.Errorf("server: cursor key: %w", err)
	}
	return &cursorSigner{key: key}, nil
}

func (cs *cursorSigner) mac(payload []byte) []byte {
	m := hmac.New(sha256.New, cs.key)
	m.Write(payload)
	return m.Sum(nil)
}

func (cs *cursorSigner) encode(collection, principal, after string) string {
	payload, _ := json.Marshal(cursorPayload{V: 1, C: collection, P: principal, A: after})
	enc := base64.RawURLEncoding
	return enc.EncodeToString(payload) + "." + enc.EncodeToString(cs.mac(payload))
}

// decode verifies a cursor and returns its after id.
func (cs *cursorSigner) decode(cur, collection, principal string) (string, error) {
	p, m, ok := strings.Cut(cur, ".")
	if !ok {
		return "", errors.New("malformed cursor")
	}
	enc := base64.RawURLEncoding
	payload, err1 := enc.DecodeString(p)
	mac, err2 := enc.DecodeString(m)
	if err1 != nil || err2 != nil {
		return "", errors.New("malformed cursor")
	}
	if !hmac.Equal(mac, cs.mac(payload)) {
		return "", errors.New("cursor signature does not verify")
	}
	var cp cursorPayload
	if err := json.Unmarshal(payload, &cp); err != nil || cp.V != 1 {
		return "", errors.New("malformed cursor")
	}
	if cp.C != collection || cp.P != principal {
		return "", errors.New("cursor belongs to another collection or principal")
	}
	return cp.A, nil
}
