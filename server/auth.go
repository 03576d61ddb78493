package server

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/stratasearch/strata/engine/contract"
)

// APIKey maps a bearer key to a principal (the --api-keys file is a JSON
// array of these). Exactly one of Key (the key itself) and KeySHA256 (hex
// SHA-256 of the key, so the file need not hold secrets) is set.
//
//	[{"key_sha256":"<64 hex>","principal":"alice","namespaces":["tenant-a/"]},
//	 {"key":"s3cr3t","principal":"ops","namespaces":["*"],"admin":true}]
type APIKey struct {
	Key       string `json:"key,omitempty"`
	KeySHA256 string `json:"key_sha256,omitempty"`
	// Principal is the name matched against document ACLs (required).
	Principal string `json:"principal"`
	// Groups are further ACL names of the principal.
	Groups []string `json:"groups,omitempty"`
	// Namespaces are the namespace prefixes the key may read and write
	// ("*" = all). Required unless Admin (an admin without namespaces
	// gets "*").
	Namespaces []string `json:"namespaces,omitempty"`
	// Admin may create and drop collections and run jobs.
	Admin bool `json:"admin,omitempty"`
}

// LoadAPIKeys reads an --api-keys file (a JSON array of APIKey, closed
// schema) and validates it. Errors name the file.
func LoadAPIKeys(path string) ([]APIKey, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("server: api keys: %w", err)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var keys []APIKey
	if err := dec.Decode(&keys); err != nil {
		return nil, fmt.Errorf("server: api keys %s: %w", path, err)
	}
	if dec.More() {
		return nil, fmt.Errorf("server: api keys %s: trailing data", path)
	}
	if keys == nil {
		keys = []APIKey{}
	}
	if err := validateKeys(keys); err != nil {
		return nil, fmt.Errorf("server: api keys %s: %w", path, err)
	}
	return keys, nil
}

func validateKeys(keys []APIKey) error {
	var errs []error
	seen := map[string]bool{}
	for i, k := range keys {
		h, err := k.hash()
		if err != nil {
			errs = append(errs, fmt.Errorf("server: api key %d: %w", i, err))
			continue
		}
		if seen[h] {
			errs = append(errs, fmt.Errorf("server: api key %d: duplicate key", i))
		}
		seen[h] = true
		if k.Principal == "" {
			errs = append(errs, fmt.Errorf("server: api key %d: principal is required", i))
		}
		if len(k.Namespaces) == 0 && !k.Admin {
			errs = append(errs, fmt.Errorf("server: api key %d (%s): namespaces are required for a non-admin key", i, k.Principal))
		}
		for _, ns := range k.Namespaces {
			if ns == "" {
				errs = append(errs, fmt.Errorf("server: api key %d (%s): empty namespace prefix", i, k.Principal))
			}
		}
	}
	return errors.Join(errs...)
}

// hash returns the hex SHA-256 the key is matched by.
func (k APIKey) hash() (string, error) {
	switch {
	case k.Key != "" && k.KeySHA256 != "":
		return "", errors.New("set key or key_sha256, not both")
	case k.Key != "":
		s := sha256.Sum256([]byte(k.Key))
		return hex.EncodeToString(s[:]), nil
	case k.KeySHA256 != "":
		b, err := hex.DecodeString(k.KeySHA256)
		if err != nil || len(b) != sha256.Size {
			return "", errors.New("key_sha256 is not 64 hex digits")
		}
		return strings.ToLower(k.KeySHA256), nil
	}
	return "", errors.New("key or key_sha256 is required")
}

// caller is who a request runs as. In open mode principal is nil (the
// trusted embedded caller) and admin is true.
type caller struct {
	name      string // "" in open mode
	principal *contract.Principal
	admin     bool
}

type keyring struct {
	hashes [][sha256.Size]byte
	keys   []APIKey
}

func newKeyring(keys []APIKey) *keyring {
	kr := &keyring{}
	for _, k := range keys {
		h, _ := k.hash()
		var b [sha256.Size]byte
		raw, _ := hex.DecodeString(h)
		copy(b[:], raw)
		kr.hashes = append(kr.hashes, b)
		kr.keys = append(kr.keys, k)
	}
	return kr
}

// lookup finds the key for a bearer token, comparing every entry in
// constant time.
func (kr *keyring) lookup(token string) (*caller, bool) {
	h := sha256.Sum256([]byte(token))
	found := -1
	for i := range kr.hashes {
		if subtle.ConstantTimeCompare(h[:], kr.hashes[i][:]) == 1 {
			found = i
		}
	}
	if found < 0 {
		return nil, false
	}
	k := kr.keys[found]
	ns := k.Namespaces
	if len(ns) == 0 {
		ns = []string{"*"}
	}
	return &caller{name: k.Principal, admin: k.Admin, principal: &contract.Principal{
		Name: k.Principal, Groups: append([]string(nil), k.Groups...), Namespaces: append([]string(nil), ns...),
	}}, true
}

type callerKey struct{}

func withCaller(ctx context.Context, c *caller) context.Context {
	return context.WithValue(ctx, callerKey{}, c)
}

func callerOf(ctx context.Context) *caller {
	if c, ok := ctx.Value(callerKey{}).(*caller); ok {
		return c
	}
	return &caller{admin: true}
}
