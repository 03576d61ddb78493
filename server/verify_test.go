package server

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stratasearch/strata/engine"
	"github.com/stratasearch/strata/engine/contract"
	"github.com/stratasearch/strata/engine/verify"
)

// verifyServer runs a server with API keys (alice: tenant-a/, bob:
// tenant-b/, an admin) and VerifyRoots tenant-a/ → rootA, tenant-b/ →
// rootB, where rootB is rootA's case variant (base/X and base/x). It
// creates collection "docs" (dim 4).
func verifyServer(t *testing.T) (rs *running, admin, alice, bob *client, rootA, rootB, base string) {
	t.Helper()
	dir := t.TempDir()
	base = filepath.Join(dir, "files")
	rootA, rootB = filepath.Join(base, "X"), filepath.Join(base, "x")
	for _, d := range []string{rootA, rootB, filepath.Join(base, "outside")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if ents, _ := os.ReadDir(base); len(ents) != 3 {
		t.Skip("case-insensitive file system")
	}
	for p, c := range map[string]string{
		filepath.Join(rootA, "a.txt"):             "l1\nl2\nl3\nl4\nl5\nl6\n",
		filepath.Join(rootB, "a.txt"):             "l1\nl2\nl3\nl4\nl5\nl6\n",
		filepath.Join(base, "outside", "pin.txt"): "0000\n",
	} {
		if err := os.WriteFile(p, []byte(c), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(filepath.Join(base, "outside", "pin.txt"), filepath.Join(rootA, "link")); err != nil {
		t.Fatal(err)
	}
	keys := []APIKey{
		{Key: "key-a", Principal: "alice", Namespaces: []string{"tenant-a/"}},
		{Key: "key-b", Principal: "bob", Namespaces: []string{"tenant-b/"}},
		{Key: "key-admin", Principal: "ops", Admin: true},
	}
	rs = start(t, filepath.Join(dir, "data"), func(o *Options) {
		o.APIKeys = keys
		o.VerifyRoots = []verify.Root{{Namespace: "tenant-a/", Dir: rootA}, {Namespace: "tenant-b/", Dir: rootB}}
	})
	anon := newClient(t, rs.url)
	admin = anon.with("key-admin")
	admin.must(http.StatusCreated, "POST", "/v1/collections", map[string]any{"name": "docs", "options": map[string]any{"dim": 4, "analyzer": "prose"}}, nil)
	return rs, admin, anon.with("key-a"), anon.with("key-b"), rootA, rootB, base
}

// pinProbes are 1,000 documents of tenant-a/ naming pinFile, one guess
// each of a PIN in 0000..0999 as the version hash.
func pinProbes(pinFile string) []contract.Document {
	docs := make([]contract.Document, 1000)
	for i := range docs {
		docs[i] = contract.Document{ID: fmt.Sprintf("p%04d", i), Content: "probe", Namespace: "tenant-a/", Trust: contract.Authoritative,
			SourceURI: "file://" + pinFile + "#L1", VersionHash: engine.VersionHash(fmt.Appendf(nil, "%04d\n", i))}
	}
	return docs
}

// verifiedOutcome is what one verified search (top_k 1000) shows alice:
// the hit ids and the dropped ids, sorted.
func verifiedOutcome(t *testing.T, c *client, col string) string {
	t.Helper()
	var res contract.Result
	c.must(http.StatusOK, "POST", "/v1/collections/"+col+"/search",
		map[string]any{"text": "probe", "top_k": 1000, "mode": "lexical", "verify": true, "scope": map[string]any{"namespace": "tenant-a/"}}, &res)
	var kept, dropped []string
	for _, h := range res.Hits {
		kept = append(kept, h.DocID)
	}
	for _, d := range res.Dropped {
		dropped = append(dropped, d.DocID)
	}
	slices.Sort(kept)
	slices.Sort(dropped)
	return fmt.Sprintf("%d kept %v, %d dropped %v", len(kept), kept, len(dropped), dropped)
}

// TestVerifyPINOracleServer is the file-content oracle attack end to end:
// a 0600 file outside every root holds a PIN; alice writes 1,000 probe
// documents naming it, one guess each, and runs one verified search.
//   - Through the API the probes are refused (400 source_not_permitted,
//     nothing written).
//   - Planted in the store without the provenance mark (as an older
//     server or an embedded writer would have stored them), they are kept
//     unverified: the search's outcome is the same for every PIN.
//   - Self-check: planted with engine.VerifiableSources the file is read,
//     and the outcome names the PIN — so this test sees an oracle when
//     there is one.
func TestVerifyPINOracleServer(t *testing.T) {
	rs, admin, alice, _, _, _, base := verifyServer(t)
	pinFile := filepath.Join(base, "outside", "pin.txt")
	admin.must(http.StatusCreated, "POST", "/v1/collections", map[string]any{"name": "marked", "options": map[string]any{"dim": 4, "analyzer": "prose"}}, nil)
	probes := pinProbes(pinFile)

	e0 := epochOf(t, admin, "docs")
	code, _, body := alice.do("POST", "/v1/collections/docs/documents", upsertBody(probes...))
	e := checkErrShape(t, body)
	if code != http.StatusBadRequest || e.ErrorCount != 1000 {
		t.Fatalf("probe upsert: %d, %d errors", code, e.ErrorCount)
	}
	for _, fe := range e.Errors {
		if fe.ErrorType != ErrTypeSourceNotPermitted {
			t.Fatalf("probe upsert error %+v", fe)
		}
	}
	if epochOf(t, admin, "docs") != e0 {
		t.Fatal("a refused probe upsert wrote")
	}

	ctx := context.Background()
	plain, err := rs.srv.db.Collection("docs")
	if err != nil {
		t.Fatal(err)
	}
	marked, err := rs.srv.db.Collection("marked")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := plain.Upsert(ctx, probes); err != nil {
		t.Fatal(err)
	}
	if _, err := marked.Upsert(ctx, probes, engine.VerifiableSources()); err != nil {
		t.Fatal(err)
	}
	var outcomes []string
	for _, pin := range []int{482, 307} {
		if err := os.WriteFile(pinFile, fmt.Appendf(nil, "%04d\n", pin), 0o600); err != nil {
			t.Fatal(err)
		}
		got := verifiedOutcome(t, alice, "docs")
		if !strings.HasPrefix(got, "1000 kept") {
			t.Fatalf("pin %04d: %.200s", pin, got)
		}
		outcomes = append(outcomes, got)
		if got := verifiedOutcome(t, alice, "marked"); !strings.HasPrefix(got, fmt.Sprintf("1 kept [p%04d], 999 dropped", pin)) {
			t.Fatalf("self-check, pin %04d: %.200s", pin, got)
		}
	}
	if outcomes[0] != outcomes[1] {
		t.Fatal("the verified search's outcome depends on the PIN")
	}
}

// TestVerifySourceURIVariants: each way of naming a file outside the
// caller's roots is refused at write time (source_not_permitted, or
// invalid_format for an unclean path or a remote host), and each
// permitted form is stored and really verified (a wrong version hash is
// dropped as stale).
func TestVerifySourceURIVariants(t *testing.T) {
	_, _, alice, bob, rootA, rootB, base := verifyServer(t)
	notPermitted, malformed := ErrTypeSourceNotPermitted, contract.ErrTypeInvalidFormat
	wrong := strings.Repeat("ab", 32)
	for i, tc := range []struct {
		name string
		c    *client
		ns   string
		uri  string
		want string // "" = accepted
	}{
		{"plain", alice, "tenant-a/", "file://" + rootA + "/a.txt", ""},
		{"span", alice, "tenant-a/", "file://" + rootA + "/a.txt#L1-L5", ""},
		{"localhost", alice, "tenant-a/", "file://localhost" + rootA + "/a.txt#L2", ""},
		{"bob in his root", bob, "tenant-b/", "file://" + rootB + "/a.txt", ""},
		{"outside", alice, "tenant-a/", "file://" + base + "/outside/pin.txt#L1", notPermitted},
		{"localhost outside", alice, "tenant-a/", "file://localhost" + base + "/outside/pin.txt", notPermitted},
		{"symlink out of the root", alice, "tenant-a/", "file://" + rootA + "/link#L1", notPermitted},
		{"case variant: bob's root from alice", alice, "tenant-a/", "file://" + rootB + "/a.txt", notPermitted},
		{"case variant: alice's root from bob", bob, "tenant-b/", "file://" + rootA + "/a.txt#L1-L5", notPermitted},
		{"dotdot", alice, "tenant-a/", "file://" + rootA + "/../outside/pin.txt", malformed},
		{"encoded dotdot", alice, "tenant-a/", "file://" + rootA + "/%2e%2e/outside/pin.txt#L1", malformed},
		{"encoded slash", alice, "tenant-a/", "file://" + rootA + "%2F..%2Foutside%2Fpin.txt", malformed},
		{"remote host", alice, "tenant-a/", "file://evil" + rootA + "/a.txt", malformed},
	} {
		id := fmt.Sprintf("v%02d", i)
		word := fmt.Sprintf("word%02dq", i)
		d := mkDoc(id, word, tc.ns, vec(1, 0, 0, 0))
		d.SourceURI, d.VersionHash = tc.uri, wrong
		code, _, body := tc.c.do("POST", "/v1/collections/docs/documents", upsertBody(d))
		if tc.want != "" {
			e := checkErrShape(t, body)
			if code != http.StatusBadRequest || e.Errors[0].ErrorType != tc.want || fmt.Sprint(e.Errors[0].Loc) != "[documents 0 source_uri]" {
				t.Errorf("%s: %d %s, want 400 %s", tc.name, code, body, tc.want)
			}
			continue
		}
		if code != http.StatusOK {
			t.Errorf("%s: %d %s", tc.name, code, body)
			continue
		}
		var res contract.Result
		tc.c.must(http.StatusOK, "POST", "/v1/collections/docs/search", map[string]any{"text": word, "verify": true, "scope": map[string]any{"namespace": tc.ns}}, &res)
		if len(res.Hits) != 0 || len(res.Dropped) != 1 {
			t.Errorf("%s: a permitted source was not verified: hits %d dropped %+v", tc.name, len(res.Hits), res.Dropped)
		}
	}
}
