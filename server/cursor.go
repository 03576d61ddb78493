package server

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
)

// Listing cursors.
//
// GET /v1/collections/{name}/documents pages through live document ids in
// ascending byte order (keyset pagination over engine.Collection.List). The
// cursor is
//
//	base64url(JSON {"v":1,"c":collection,"p":principal,"a":after}) "." base64url(HMAC-SHA256(key, payload))
//
// with the DB's cursor key (engine.DB.CursorKey: DataDir/cursor.key, the
// key that signs search cursors too; the two formats cannot be taken for
// one another). Cursors signed before the DB owned the key, with
// DataDir/server/cursor.key, still verify (engine.DB.CursorKeys). A cursor
// whose MAC does not verify, or that names another collection or
// principal, is a 400. Cursors carry no epoch: a page reads the newest
// epoch, so an id written between pages appears if it sorts after the
// cursor, and every id live throughout the walk appears exactly once.

type cursorPayload struct {
	V int    `json:"v"`
	C string `json:"c"`
	P string `json:"p"`
	A string `json:"a"`
}

// cursorSigner signs with keys[0] and verifies with any of keys.
type cursorSigner struct{ keys [][]byte }

func (cs *cursorSigner) mac(payload []byte) []byte { return mac(cs.keys[0], payload) }

func mac(key, payload []byte) []byte {
	m := hmac.New(sha256.New, key)
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
	sig, err2 := enc.DecodeString(m)
	if err1 != nil || err2 != nil {
		return "", errors.New("malformed cursor")
	}
	ok = false
	for _, k := range cs.keys {
		ok = ok || hmac.Equal(sig, mac(k, payload))
	}
	if !ok {
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
