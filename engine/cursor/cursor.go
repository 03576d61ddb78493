// Package cursor holds a database's cursor signing: the HMAC key (one per
// database, in a key file read and created through a vfs.FS) and the codec
// of search cursors, the opaque strings that continue a search from the
// page before (engine.Collection.Search; contract.Result.NextCursor).
//
// A search cursor is base64url (no padding) of
//
//	+---------+----------+------------------+---------+-------------+-----------------+
//	| ver (1) | epoch u64| fingerprint (16) | n u16   | n × u64 ids | HMAC-SHA256[:16]|
//	+---------+----------+------------------+---------+-------------+-----------------+
//
// little-endian; ids are IDHash values (FNV-1a-64) of the document ids
// already returned (version 1 had 32-bit ones and is refused); the MAC,
// keyed with the database's key, covers every byte before it.
//
// The key file holds exactly KeySize random bytes (crypto/rand), written
// atomically (temp file, fsync, rename, fsync directory) with mode 0600 on
// a file system with permission bits. The same key signs the server's
// listing cursors (package server), whose format (JSON payload "." MAC)
// cannot be taken for a search cursor's or the reverse.
package cursor

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"io/fs"

	"github.com/stratasearch/strata/engine/contract"
	"github.com/stratasearch/strata/internal/base"
	"github.com/stratasearch/strata/vfs"
)

// KeySize is the length of a cursor key in bytes.
const KeySize = 32

const (
	version = 2
	macLen  = 16
	hdrLen  = 1 + 8 + 16 + 2
)

// ErrCorrupt is matched (errors.Is) by the error of a key file that exists
// but is not a key: a *base.CorruptError of Kind "cursor key" naming the
// file and the byte offset. It is the one ErrCorrupt of every format.
var ErrCorrupt = base.ErrCorrupt

// Data is a search cursor's content.
type Data struct {
	// Epoch is the epoch of the page the cursor follows (the snapshot
	// retained for it, if still there, serves the next page).
	Epoch uint64
	// Fingerprint identifies the query the cursor belongs to.
	Fingerprint [16]byte
	// Seen are the IDHash values of the ids already returned, in order
	// (at most contract.MaxTopK).
	Seen []uint64
}

// IDHash is the 64-bit FNV-1a hash a cursor records for a returned id
// (32 bits collided on real ids: doc-1079599 / doc-1262382).
func IDHash(id string) uint64 {
	h := fnv.New64a()
	io.WriteString(h, id)
	return h.Sum64()
}

// Encode signs d with key.
func Encode(d Data, key []byte) string {
	b := make([]byte, hdrLen, hdrLen+8*len(d.Seen)+macLen)
	b[0] = version
	binary.LittleEndian.PutUint64(b[1:], d.Epoch)
	copy(b[9:], d.Fingerprint[:])
	binary.LittleEndian.PutUint16(b[25:], uint16(len(d.Seen)))
	for _, h := range d.Seen {
		b = binary.LittleEndian.AppendUint64(b, h)
	}
	m := hmac.New(sha256.New, key)
	m.Write(b)
	b = append(b, m.Sum(nil)[:macLen]...)
	return base64.RawURLEncoding.EncodeToString(b)
}

// Decode verifies s with key and returns its content. The error says, in
// words a caller can be shown, why s is not a cursor of this key.
func Decode(s string, key []byte) (Data, error) {
	var d Data
	b, err := base64.RawURLEncoding.Strict().DecodeString(s)
	if err != nil {
		return d, errors.New("the cursor is not base64url")
	}
	if len(b) < hdrLen+macLen {
		return d, errors.New("the cursor is truncated")
	}
	body, mac := b[:len(b)-macLen], b[len(b)-macLen:]
	m := hmac.New(sha256.New, key)
	m.Write(body)
	if !hmac.Equal(mac, m.Sum(nil)[:macLen]) {
		return d, errors.New("the cursor's signature does not verify (forged, corrupted, or from another database)")
	}
	if body[0] != version {
		return d, fmt.Errorf("cursor version %d is not supported", body[0])
	}
	n := int(binary.LittleEndian.Uint16(body[25:]))
	if len(body) != hdrLen+8*n || n > contract.MaxTopK {
		return d, errors.New("the cursor's length does not match its count")
	}
	d.Epoch = binary.LittleEndian.Uint64(body[1:])
	copy(d.Fingerprint[:], body[9:25])
	d.Seen = make([]uint64, n)
	for i := range d.Seen {
		d.Seen[i] = binary.LittleEndian.Uint64(body[hdrLen+8*i:])
	}
	return d, nil
}

// ReadKey reads the key file path. A missing file is an error satisfying
// errors.Is(err, fs.ErrNotExist); a file of another length wraps
// ErrCorrupt.
func ReadKey(fsys vfs.FS, path string) ([]byte, error) {
	b, err := vfs.ReadFile(fsys, path)
	if err != nil {
		return nil, fmt.Errorf("cursor: read key %s: %w", path, err)
	}
	if len(b) != KeySize {
		return nil, base.Corruptf("cursor key", path, 0, "cursor key is %d bytes, want %d", len(b), KeySize)
	}
	return b, nil
}

// LoadKey returns the key in path, creating the file if it does not
// exist: with the key of the first file of adopt (older key files, only
// read, never changed) that holds a valid one, else with KeySize bytes
// from crypto/rand. A damaged adopt file is skipped; a damaged path is
// an error (wrapping ErrCorrupt), never replaced: cursors signed with the
// old key would silently stop verifying.
func LoadKey(fsys vfs.FS, path string, adopt ...string) ([]byte, error) {
	key, err := ReadKey(fsys, path)
	if err == nil || !errors.Is(err, fs.ErrNotExist) {
		return key, err
	}
	for _, p := range adopt {
		if key, err = ReadKey(fsys, p); err == nil {
			break
		}
	}
	if key == nil {
		key = make([]byte, KeySize)
		if _, err := rand.Read(key); err != nil {
			return nil, fmt.Errorf("cursor: new key: %w", err)
		}
	}
	if err := vfs.WriteFileAtomicMode(fsys, path, 0o600, func(w io.Writer) error {
		_, err := w.Write(key)
		return err
	}); err != nil {
		return nil, fmt.Errorf("cursor: write key: %w", err)
	}
	return key, nil
}
