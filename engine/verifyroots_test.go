package engine

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stratasearch/strata/engine/contract"
	"github.com/stratasearch/strata/engine/verify"
)

func openDBWith(t *testing.T, o Options) *DB {
	t.Helper()
	db, err := Open(t.TempDir(), o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// pinProbe writes 1,000 documents naming the 0600 file pinFile, one per
// guess of a PIN in 0000..0999 (version hash of "%04d\n"), and runs one
// verified search. It returns the ids kept and dropped, sorted.
func pinProbe(t *testing.T, c *Collection, pinFile string, opts ...WriteOption) (kept, dropped []string) {
	t.Helper()
	docs := make([]contract.Document, 1000)
	for i := range docs {
		docs[i] = contract.Document{ID: fmt.Sprintf("p%04d", i), Content: "probe", Namespace: "a/", Trust: contract.Authoritative,
			SourceURI: "file://" + pinFile + "#L1", VersionHash: VersionHash(fmt.Appendf(nil, "%04d\n", i))}
	}
	if _, err := c.Upsert(context.Background(), docs, opts...); err != nil {
		t.Fatal(err)
	}
	r := mustSearch(t, c, contract.Query{Text: "probe", Scope: contract.Scope{Namespace: "a/"}, TopK: 1000, Mode: contract.Lexical, Verify: true})
	for _, h := range r.Hits {
		kept = append(kept, h.DocID)
	}
	for _, d := range r.Dropped {
		dropped = append(dropped, d.DocID)
	}
	slices.Sort(kept)
	slices.Sort(dropped)
	return kept, dropped
}

// TestVerifyPINOracleClosed: documents naming a file outside every root
// (a 0600 PIN file) with a guess each as version hash: one verified search
// keeps or drops the same documents whatever the PIN is. The self-check
// runs the same probe with VerifiableSources (the file is then read) and
// finds the PIN, so the probe can see an oracle when there is one.
func TestVerifyPINOracleClosed(t *testing.T) {
	secret, root := t.TempDir(), t.TempDir()
	pinFile := filepath.Join(secret, "pin.txt")
	var outcomes []string
	for _, pin := range []string{"0482", "0307"} {
		if err := os.WriteFile(pinFile, []byte(pin+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		db := openDBWith(t, Options{VerifyRoots: []verify.Root{{Namespace: "a/", Dir: root}}})
		c, err := db.CreateCollection("c", CollectionOptions{Dim: 2, Sync: "none"})
		if err != nil {
			t.Fatal(err)
		}
		kept, dropped := pinProbe(t, c, pinFile)
		if len(kept) != 1000 || len(dropped) != 0 {
			t.Fatalf("pin %s: want every probe kept unverified, got %d kept %d dropped", pin, len(kept), len(dropped))
		}
		outcomes = append(outcomes, fmt.Sprint(kept, dropped))

		// Self-check: with the sources vouched for, the file is read and
		// exactly the right guess survives.
		c2, err := db.CreateCollection("c2", CollectionOptions{Dim: 2, Sync: "none"})
		if err != nil {
			t.Fatal(err)
		}
		kept, dropped = pinProbe(t, c2, pinFile, VerifiableSources())
		if len(kept) != 1 || kept[0] != "p"+pin || len(dropped) != 999 {
			t.Fatalf("self-check: pin %s: kept %v, %d dropped", pin, kept, len(dropped))
		}
	}
	if outcomes[0] != outcomes[1] {
		t.Fatal("the verified search's outcome depends on the PIN")
	}
}

// confinementFixture: base/X (root of namespace "a/"), base/x (root of
// "b/": a case variant), base/outside/secret.txt, and under base/X a
// file, a subdirectory, a symbolic link to the secret and one to the
// outside directory.
type confinementFixture struct {
	base, rootA, rootB, secret string
}

func newConfinementFixture(t *testing.T) confinementFixture {
	t.Helper()
	base := t.TempDir()
	f := confinementFixture{base: base, rootA: filepath.Join(base, "X"), rootB: filepath.Join(base, "x"),
		secret: filepath.Join(base, "outside", "secret.txt")}
	for _, d := range []string{f.rootA, f.rootB, filepath.Join(f.rootA, "sub"), filepath.Dir(f.secret)} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := os.Stat(filepath.Join(base, "X")); err == nil {
		if fi, _ := os.Stat(f.rootB); fi == nil {
			t.Skip("case-insensitive file system")
		}
	}
	for p, c := range map[string]string{
		filepath.Join(f.rootA, "ok.txt"):       "line one\nline two\n",
		filepath.Join(f.rootA, "sub", "s.txt"): "sub\n",
		filepath.Join(f.rootB, "ok.txt"):       "line one\nline two\n",
		f.secret:                               "hunter2\n",
	} {
		if err := os.WriteFile(p, []byte(c), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(f.secret, filepath.Join(f.rootA, "escape")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Dir(f.secret), filepath.Join(f.rootA, "outdir")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(f.base, "nowhere", "gone.txt"), filepath.Join(f.rootA, "dangling")); err != nil {
		t.Fatal(err)
	}
	return f
}

// confinementCases: each URI with the namespace it is written in and
// whether verification may read it (entitled).
func (f confinementFixture) cases() []struct {
	name, ns, uri string
	entitled      bool
} {
	enc := func(p string) string { return (&url.URL{Scheme: "file", Path: p}).String() }
	return []struct {
		name, ns, uri string
		entitled      bool
	}{
		{"plain", "a/", "file://" + f.rootA + "/ok.txt", true},
		{"span", "a/", "file://" + f.rootA + "/ok.txt#L1-L2", true},
		{"span single", "a/", "file://" + f.rootA + "/ok.txt#L2", true},
		{"subdirectory", "a/", "file://" + f.rootA + "/sub/s.txt", true},
		{"missing under root", "a/", "file://" + f.rootA + "/missing.txt", true},
		{"localhost", "a/", "file://localhost" + f.rootA + "/ok.txt#L1", true},
		{"LOCALHOST", "a/", "file://LOCALHOST" + f.rootA + "/ok.txt#L1", true},
		{"scheme case", "a/", "FILE://" + f.rootA + "/ok.txt", true},
		{"percent-encoded letters", "a/", "file://" + strings.Replace(f.rootA, "/X", "/%58", 1) + "/ok.txt", true},
		{"symlink to outside file", "a/", "file://" + f.rootA + "/escape", false},
		{"symlink to outside dir", "a/", "file://" + f.rootA + "/outdir/secret.txt#L1", false},
		{"dangling symlink", "a/", "file://" + f.rootA + "/dangling", false},
		{"dotdot", "a/", "file://" + f.rootA + "/../outside/secret.txt", false},
		{"encoded dotdot", "a/", "file://" + f.rootA + "/%2e%2e/outside/secret.txt#L1", false},
		{"encoded dotdot upper", "a/", "file://" + f.rootA + "/%2E%2E/outside/secret.txt", false},
		{"encoded slash", "a/", "file://" + f.rootA + "%2F..%2Foutside%2Fsecret.txt", false},
		{"escaped path", "a/", enc(f.rootA + "/../outside/secret.txt"), false},
		{"outside", "a/", "file://" + f.secret + "#L1", false},
		{"remote host", "a/", "file://evil" + f.rootA + "/ok.txt", false},
		{"root of b from a", "a/", "file://" + f.rootB + "/ok.txt", false},
		{"root of a from b", "b/", "file://" + f.rootA + "/ok.txt", false},
		{"root of b from b", "b/", "file://" + f.rootB + "/ok.txt", true},
		{"namespace case", "A/", "file://" + f.rootA + "/ok.txt", false},
		{"no namespace", "", "file://" + f.rootA + "/ok.txt", false},
	}
}

func (f confinementFixture) roots() []verify.Root {
	return []verify.Root{{Namespace: "a/", Dir: f.rootA}, {Namespace: "b/", Dir: f.rootB}}
}

// TestVerifyConfinement: a document written without VerifiableSources
// has its source read only under a root bound to its namespace; each
// variant (symbolic links, "..", %2e%2e, %2F, localhost, spans, case
// variants of paths, roots and namespaces) is checked by the search's
// outcome: every document carries a wrong version hash, so one that is
// read is dropped and one that is not is kept. SourcePermitted (the
// server's write-time check) must agree.
func TestVerifyConfinement(t *testing.T) {
	f := newConfinementFixture(t)
	db := openDBWith(t, Options{VerifyRoots: f.roots()})
	c, err := db.CreateCollection("c", CollectionOptions{Dim: 2, Sync: "none"})
	if err != nil {
		t.Fatal(err)
	}
	wrong := strings.Repeat("ab", 32)
	for i, tc := range f.cases() {
		if got := c.SourcePermitted(tc.ns, tc.uri); got != tc.entitled {
			t.Errorf("%s: SourcePermitted(%q, %q) = %v, want %v", tc.name, tc.ns, tc.uri, got, tc.entitled)
		}
		id := fmt.Sprintf("d%02d", i)
		word := fmt.Sprintf("w%02dx", i)
		d := contract.Document{ID: id, Content: word, Namespace: tc.ns, SourceURI: tc.uri, VersionHash: wrong, Trust: contract.Authoritative}
		mustUpsert(t, c, d)
		r := mustSearch(t, c, contract.Query{Text: word, Verify: true, Mode: contract.Lexical})
		read := len(r.Dropped) == 1 && len(r.Hits) == 0
		keptAsIs := len(r.Hits) == 1 && len(r.Dropped) == 0
		if !read && !keptAsIs {
			t.Fatalf("%s: hits %v dropped %+v", tc.name, ids(r.Hits), r.Dropped)
		}
		if read != tc.entitled {
			t.Errorf("%s (%s in %q): source read = %v, want %v", tc.name, tc.uri, tc.ns, read, tc.entitled)
		}
	}
	// An entitled span with the right hash is kept: verification still
	// works where it may read.
	d := contract.Document{ID: "good", Content: "goodword", Namespace: "a/", SourceURI: "file://" + f.rootA + "/ok.txt#L2",
		VersionHash: VersionHash([]byte("line two\n")), Trust: contract.Authoritative}
	mustUpsert(t, c, d)
	if r := mustSearch(t, c, contract.Query{Text: "goodword", Verify: true}); len(r.Hits) != 1 || len(r.Dropped) != 0 {
		t.Fatalf("entitled fresh span: hits %v dropped %+v", ids(r.Hits), r.Dropped)
	}
}

// TestVerifySourceRootsEntitle: the collection's SourceRoots entitle
// every namespace; VerifiableSources entitles any path.
func TestVerifySourceRootsEntitle(t *testing.T) {
	f := newConfinementFixture(t)
	db := openDBWith(t, Options{})
	c, err := db.CreateCollection("c", CollectionOptions{Dim: 2, Sync: "none", SourceRoots: []string{f.rootB}})
	if err != nil {
		t.Fatal(err)
	}
	wrong := strings.Repeat("cd", 32)
	for _, tc := range []struct {
		ns, uri    string
		verifiable bool
		read       bool
	}{
		{"", "file://" + f.rootB + "/ok.txt", false, true},
		{"z/", "file://" + f.rootB + "/ok.txt", false, true},
		{"z/", "file://" + f.rootA + "/ok.txt", false, false},
		{"z/", "file://" + f.secret, true, true},
	} {
		if _, err := c.Delete(context.Background(), []string{"d"}); err != nil {
			t.Fatal(err)
		}
		d := contract.Document{ID: "d", Content: "word", Namespace: tc.ns, SourceURI: tc.uri, VersionHash: wrong, Trust: contract.Authoritative}
		var opts []WriteOption
		if tc.verifiable {
			opts = append(opts, VerifiableSources())
		}
		if _, err := c.Upsert(context.Background(), []contract.Document{d}, opts...); err != nil {
			t.Fatal(err)
		}
		r := mustSearch(t, c, contract.Query{Text: "word", Verify: true})
		if read := len(r.Dropped) == 1; read != tc.read {
			t.Errorf("%q %s verifiable=%v: read %v, want %v", tc.ns, tc.uri, tc.verifiable, read, tc.read)
		}
	}
}

// TestVerifiableMarkReserved: the provenance mark cannot be written as
// metadata, and is never returned.
func TestVerifiableMarkReserved(t *testing.T) {
	c := newColl(t, CollectionOptions{Dim: 2})
	d := doc("x", "text", nil)
	d.SourceURI = "file:///nowhere/x.txt"
	d.Metadata = map[string]contract.Value{metaVerifiable: contract.String("true")}
	_, err := c.Upsert(context.Background(), []contract.Document{d})
	var ve *contract.ValidationError
	if !errors.As(err, &ve) || !strings.Contains(err.Error(), "reserved") {
		t.Fatalf("reserved metadata key accepted: %v", err)
	}
	d.Metadata = map[string]contract.Value{"k": contract.String("v")}
	mustUpsertVerifiable(t, c, d)
	got, err := c.Get(context.Background(), "x")
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Metadata) != 1 || fmt.Sprint(got.Metadata["k"]) != fmt.Sprint(contract.String("v")) {
		t.Fatalf("metadata returned: %v", got.Metadata)
	}
	r := mustSearch(t, c, contract.Query{Text: "text"})
	if len(r.Hits) != 1 || len(r.Hits[0].Metadata) != 1 {
		t.Fatalf("search metadata: %+v", r.Hits)
	}
}
