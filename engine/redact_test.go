package engine

import (
	"bytes"
	"context"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stratasearch/strata/engine/contract"
	"github.com/stratasearch/strata/engine/redact/redacttest"
)

func TestRedactionAtIngest(t *testing.T) {
	ctx := context.Background()
	db, dir := newDB(t)
	c, err := db.CreateCollection("red", CollectionOptions{Dim: 4, Sync: "none"})
	if err != nil {
		t.Fatal(err)
	}
	if c.Options().Redact != RedactAuto {
		t.Fatalf("default Redact = %q", c.Options().Redact)
	}
	ps := redacttest.PlantedSecrets()
	vec := func(i int) []float32 { return []float32{1, float32(i%7) + 1, float32(i%3) - 1, 0.5} }
	var docs []contract.Document
	for i, p := range ps {
		docs = append(docs, contract.Document{ID: "ext-" + p.Name, Content: "incident notes " + p.Text,
			Vector: vec(i), Trust: contract.ExternalUnverified,
			Metadata: map[string]contract.Value{"note": contract.String("pasted " + p.Text)}})
	}
	for i, s := range redacttest.CleanTexts {
		docs = append(docs, contract.Document{ID: "clean-" + string(rune('a'+i)), Content: s, Vector: vec(100 + i),
			Trust: contract.ExternalUnverified, Metadata: map[string]contract.Value{"n": contract.Number(float64(i))}})
	}
	// Authoritative content is not redacted under "auto".
	authText := "export AWS_ACCESS_KEY_ID=" + "AK" + "IA" + redacttest.Gen{R: rand.New(rand.NewPCG(9, 9))}.S(16, redacttest.Upper2)
	docs = append(docs, contract.Document{ID: "auth-aws", Content: authText, Vector: vec(200), Trust: contract.Authoritative})
	orig := make([]contract.Document, len(docs))
	copy(orig, docs)
	mustUpsert(t, c, docs...)
	for i := range docs {
		if docs[i].Content != orig[i].Content {
			t.Fatalf("Upsert modified the caller's document %d", i)
		}
	}

	leaks := func(where, s string) {
		t.Helper()
		for _, p := range ps {
			if strings.Contains(s, p.Secret) {
				t.Errorf("%s leaks %s secret", where, p.Name)
			}
		}
	}
	envText := func(e contract.Envelope) string {
		s := e.Content
		for _, v := range e.Metadata {
			if x, ok := v.Str(); ok {
				s += "\n" + x
			}
		}
		return s
	}
	for i, p := range ps {
		id := "ext-" + p.Name
		d, err := c.Get(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		leaks("Get("+id+")", envText(contract.Envelope{Content: d.Content, Metadata: d.Metadata}))
		if n, _ := d.Metadata[MetaRedactions].Num(); n != 2 { // content + "note"
			t.Errorf("%s: redactions = %v, want 2", id, d.Metadata[MetaRedactions])
		}
		if rules, ok := d.Metadata[MetaRedactionRules].List(); !ok || len(rules) != 1 || (p.Rule != "" && rules[0] != p.Rule) {
			t.Errorf("%s: redaction_rules = %v, want [%s]", id, rules, p.Rule)
		}
		if d.VersionHash != VersionHash([]byte(docs[i].Content)) {
			t.Errorf("%s: version hash is not the hash of the source bytes before redaction", id)
		}
		// Lexical: the secret as a query, and each of its long analysed
		// terms, finds nothing that contains it — no posting holds it.
		res := mustSearch(t, c, contract.Query{Text: p.Secret, Mode: contract.Lexical, TopK: 50})
		for _, h := range res.Hits {
			leaks("lexical hit "+h.DocID, envText(h))
		}
		for _, term := range c.an.Terms(p.Secret) {
			if len(term) < 10 {
				continue
			}
			if r := mustSearch(t, c, contract.Query{Text: term, Mode: contract.Lexical}); len(r.Hits) > 0 {
				t.Errorf("%s: term %q of the secret is in the postings (%v)", p.Name, term, ids(r.Hits))
			}
		}
	}
	// Dense and hybrid: every hit's content and metadata are redacted.
	for i := range ps {
		for _, mode := range []contract.Mode{contract.Dense, contract.Hybrid} {
			q := contract.Query{Vector: vec(i), Mode: mode, TopK: 100}
			if mode == contract.Hybrid {
				q.Text = "incident notes"
			}
			res := mustSearch(t, c, q)
			if len(res.Hits) == 0 {
				t.Fatalf("%s search found nothing", mode)
			}
			for _, h := range res.Hits {
				leaks(string(mode)+" hit "+h.DocID, envText(h))
			}
		}
	}
	// Stored documents (the tier's own copy) and every byte on disk (WAL).
	sn := c.store.Snapshot()
	for _, p := range ps {
		d, _, ok := sn.Get("ext-" + p.Name)
		if !ok {
			t.Fatalf("stored ext-%s missing", p.Name)
		}
		s := d.Content
		for _, v := range d.Metadata {
			s += v
		}
		leaks("stored document", s)
	}
	sn.Close()
	var disk []byte
	filepath.WalkDir(filepath.Join(dir, "collections", "red"), func(path string, de os.DirEntry, err error) error {
		if err == nil && !de.IsDir() {
			b, _ := os.ReadFile(path)
			disk = append(disk, b...)
		}
		return nil
	})
	if !bytes.Contains(disk, []byte("incident notes")) {
		t.Fatal("the on-disk check is vacuous: the WAL does not hold plain content")
	}
	for _, p := range ps {
		if bytes.Contains(disk, []byte(p.Secret)) {
			t.Errorf("%s secret is on disk", p.Name)
		}
	}
	// Clean content is stored byte-identical, without redaction metadata.
	for i, s := range redacttest.CleanTexts {
		d, err := c.Get(ctx, "clean-"+string(rune('a'+i)))
		if err != nil {
			t.Fatal(err)
		}
		if d.Content != s || len(d.Metadata) != 1 {
			t.Errorf("clean doc %d changed: %q %v", i, d.Content, d.Metadata)
		}
	}
	if d, _ := c.Get(ctx, "auth-aws"); d.Content != authText {
		t.Errorf("auto policy redacted authoritative content: %q", d.Content)
	}
}

func TestRedactPolicies(t *testing.T) {
	ctx := context.Background()
	db, _ := newDB(t)
	p := redacttest.PlantedSecrets()[5] // github-pat
	text := "a " + p.Text + " and " + redacttest.PlantedSecrets()[0].Text
	for _, tc := range []struct {
		policy RedactPolicy
		trust  contract.Trust
		want   int // redactions
	}{
		{RedactOff, contract.ExternalUnverified, 0},
		{RedactAuto, contract.Derived, 0},
		{RedactAuto, contract.ExternalUnverified, 2},
		{RedactAlways, contract.Authoritative, 2},
	} {
		c, err := db.CreateCollection("p-"+string(tc.policy)+"-"+string(tc.trust), CollectionOptions{Dim: 2, Sync: "none", Redact: tc.policy})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.Upsert(ctx, []contract.Document{{ID: "d", Content: text, Trust: tc.trust}}); err != nil {
			t.Fatal(err)
		}
		d, _ := c.Get(ctx, "d")
		n, _ := d.Metadata[MetaRedactions].Num()
		if int(n) != tc.want {
			t.Errorf("%s/%s: redactions %v, want %d", tc.policy, tc.trust, n, tc.want)
		}
		if kept := strings.Contains(d.Content, p.Secret); kept != (tc.want == 0) {
			t.Errorf("%s/%s: secret kept = %v", tc.policy, tc.trust, kept)
		}
		if tc.want == 0 && d.Content != text {
			t.Errorf("%s/%s: content changed", tc.policy, tc.trust)
		}
	}
	if _, err := db.CreateCollection("bad", CollectionOptions{Dim: 2, Redact: "sometimes"}); err == nil || !strings.Contains(err.Error(), "Redact") {
		t.Errorf("bad policy: %v", err)
	}
}

// TestRedactionBeforeEmbedding: with a live embedder (embedding.go), the
// vectors are computed from the redacted text: the embedder never sees a
// planted secret, and a dense query made of a secret finds documents only
// through their redacted contents.
func TestRedactionBeforeEmbedding(t *testing.T) {
	f := &bowEmbedder{model: "fake-bow", dim: 16}
	_, c, _ := embedColl(t, f)
	ps := redacttest.PlantedSecrets()
	var docs []contract.Document
	for _, p := range ps {
		docs = append(docs, contract.Document{ID: p.Name, Content: "ticket says " + p.Text, Trust: contract.ExternalUnverified})
	}
	mustUpsert(t, c, docs...)
	f.mu.Lock()
	for _, call := range f.calls {
		for _, text := range call {
			for _, p := range ps {
				if strings.Contains(text, p.Secret) {
					t.Errorf("the embedder saw the %s secret", p.Name)
				}
			}
		}
	}
	f.mu.Unlock()
	for _, p := range ps {
		res := mustSearch(t, c, contract.Query{Text: p.Secret, Mode: contract.Dense, TopK: len(ps)})
		if len(res.Hits) == 0 {
			t.Fatal("dense search found nothing")
		}
		for _, h := range res.Hits {
			for _, p2 := range ps {
				if strings.Contains(h.Content, p2.Secret) {
					t.Errorf("dense hit %s holds the %s secret", h.DocID, p2.Name)
				}
			}
		}
	}
}

// TestRedactSourceURI: a password in a source URI's userinfo and a token in
// its query string are removed before the URI is stored; the path, user name
// and host stay, a clean URI is stored byte-identical, and the hit's
// SourceURI on search equals the stored one.
func TestRedactSourceURI(t *testing.T) {
	ctx := context.Background()
	db, _ := newDB(t)
	c, err := db.CreateCollection("uris", CollectionOptions{Dim: 2, Sync: "none"})
	if err != nil {
		t.Fatal(err)
	}
	pat := redacttest.PlantedSecrets()[5].Secret // github-pat
	const pw = "Tr0ub4dor-uri-9x"
	docs := []contract.Document{
		{ID: "pw", Content: "clone the mirror repository", Trust: contract.ExternalUnverified,
			SourceURI: "https://alice:" + pw + "@git.example.com/team/repo.git#L10"},
		{ID: "tok", Content: "download the mirror artefact", Trust: contract.ExternalUnverified,
			SourceURI: "https://files.example.com/a/b.tar.gz?token=" + pat + "&v=2"},
		{ID: "clean", Content: "mirror notes", Trust: contract.ExternalUnverified,
			SourceURI: "file:///srv/notes/9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08.md"},
	}
	if _, err := c.Upsert(ctx, docs); err != nil {
		t.Fatal(err)
	}
	for _, d := range docs {
		got, err := c.Get(ctx, d.ID)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(got.SourceURI, pw) || strings.Contains(got.SourceURI, pat) {
			t.Errorf("%s: secret kept in source URI %q", d.ID, got.SourceURI)
		}
		switch d.ID {
		case "pw":
			if want := "https://alice@git.example.com/team/repo.git#L10"; got.SourceURI != want {
				t.Errorf("pw: URI %q, want %q", got.SourceURI, want)
			}
			if n, _ := got.Metadata[MetaRedactions].Num(); n != 1 {
				t.Errorf("pw: redactions %v, want 1", n)
			}
			if r, _ := got.Metadata[MetaRedactionRules].List(); !slices.Equal(r, []string{RuleURIPassword}) {
				t.Errorf("pw: rules %v, want [%s]", r, RuleURIPassword)
			}
		case "tok":
			if !strings.HasPrefix(got.SourceURI, "https://files.example.com/a/b.tar.gz?token=") || !strings.HasSuffix(got.SourceURI, "&v=2") {
				t.Errorf("tok: URI %q lost its shape", got.SourceURI)
			}
		case "clean":
			if got.SourceURI != d.SourceURI || got.Metadata[MetaRedactions].Kind() != contract.KindInvalid {
				t.Errorf("clean: URI %q / metadata %v changed", got.SourceURI, got.Metadata)
			}
		}
	}
	res, err := c.Search(ctx, contract.Query{Text: "mirror", Mode: contract.Lexical, TopK: 10})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Hits) != 3 {
		t.Fatalf("search: %d hits, want 3", len(res.Hits))
	}
	for _, h := range res.Hits {
		if strings.Contains(h.SourceURI, pw) || strings.Contains(h.SourceURI, pat) {
			t.Errorf("hit %s: secret in source URI %q", h.DocID, h.SourceURI)
		}
	}
}

// TestDeleteBySourceAfterURIRedaction (review F3): a connector that
// ingests a document under its real source URI and later deletes by that
// same URI deletes it, although the stored URI was redacted.
func TestDeleteBySourceAfterURIRedaction(t *testing.T) {
	ctx := context.Background()
	db, _ := newDB(t)
	c, err := db.CreateCollection("uris", CollectionOptions{Dim: 2, Sync: "none"})
	if err != nil {
		t.Fatal(err)
	}
	pat := redacttest.PlantedSecrets()[5].Secret
	uris := []string{
		"https://alice:Tr0ub4dor-uri-9x@git.example.com/team/repo.git",
		"https://files.example.com/a/b.tar.gz?token=" + pat,
	}
	for i, u := range uris {
		if _, err := c.Upsert(ctx, []contract.Document{{ID: "d" + string(rune('0'+i)), Content: "mirror notes",
			Trust: contract.ExternalUnverified, SourceURI: u}}); err != nil {
			t.Fatal(err)
		}
	}
	for i, u := range uris {
		_, n, err := c.DeleteBySource(ctx, u)
		if err != nil {
			t.Fatal(err)
		}
		if n != 1 {
			t.Errorf("DeleteBySource(uri %d, the URI the document was written with) deleted %d documents, want 1", i, n)
		}
	}
}

// TestRedactURIMetadataCounts: every removal from the source URI is counted
// in the document's redactions and named in its rules, next to those of
// the content.
func TestRedactURIMetadataCounts(t *testing.T) {
	ctx := context.Background()
	db, _ := newDB(t)
	c, err := db.CreateCollection("uris", CollectionOptions{Dim: 2, Sync: "none"})
	if err != nil {
		t.Fatal(err)
	}
	pat := redacttest.PlantedSecrets()[5].Secret
	d := contract.Document{ID: "d", Content: "the key is " + pat, Trust: contract.ExternalUnverified,
		SourceURI: "https://alice:Tr0ub4dor-9x@h.example.com/x?api_key=hunter2-key&page=3#access_token=" + pat}
	if _, err := c.Upsert(ctx, []contract.Document{d}); err != nil {
		t.Fatal(err)
	}
	got, err := c.Get(ctx, "d")
	if err != nil {
		t.Fatal(err)
	}
	if want := "https://alice@h.example.com/x?api_key=[REDACTED:password-assignment]&page=3#access_token=[REDACTED:github-pat]"; got.SourceURI != want {
		t.Errorf("URI %q, want %q", got.SourceURI, want)
	}
	if n, _ := got.Metadata[MetaRedactions].Num(); n != 4 {
		t.Errorf("redactions %v, want 4 (content 1, URI 3)", n)
	}
	if r, _ := got.Metadata[MetaRedactionRules].List(); !slices.Equal(r, []string{"github-pat", "password-assignment", RuleURIPassword}) {
		t.Errorf("rules %v", r)
	}
	// DeleteBySource by the stored (redacted) form still works too.
	if _, n, err := c.DeleteBySource(ctx, got.SourceURI); err != nil || n != 1 {
		t.Errorf("DeleteBySource(stored form) = %d, %v; want 1", n, err)
	}
}

// TestURIPrefixMatchesRedactedURI: a Scope.URIPrefix written with the
// credentials the document's URI was stored without still finds it.
func TestURIPrefixMatchesRedactedURI(t *testing.T) {
	ctx := context.Background()
	db, _ := newDB(t)
	c, err := db.CreateCollection("uriprefix", CollectionOptions{Dim: 2, Sync: "none"})
	if err != nil {
		t.Fatal(err)
	}
	const raw = "https://alice:Tr0ub4dor-uri-9x@git.example.com/team/repo/"
	if _, err := c.Upsert(ctx, []contract.Document{
		{ID: "in", Content: "mirror notes", SourceURI: raw + "a.md", Trust: contract.ExternalUnverified},
		{ID: "out", Content: "mirror notes", SourceURI: "https://git.example.com/other/b.md", Trust: contract.ExternalUnverified},
	}); err != nil {
		t.Fatal(err)
	}
	for _, prefix := range []string{raw, "https://alice@git.example.com/team/"} {
		res, err := c.Search(ctx, contract.Query{Text: "mirror", Mode: contract.Lexical, TopK: 10, Scope: contract.Scope{URIPrefix: prefix}})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Hits) != 1 || res.Hits[0].DocID != "in" {
			t.Errorf("URIPrefix %q: hits %v, want [in]", prefix, res.Hits)
		}
	}
}
