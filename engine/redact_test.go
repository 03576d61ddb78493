package engine

import (
	"bytes"
	"context"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stratasearch/strata/engine/contract"
)

// Every fake secret below is assembled at run time from fragments and a
// seeded generator, so the repository itself holds no string a secret
// scanner would flag.

const (
	alnum  = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	upper2 = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"
	b64    = alnum + "+/"
	digits = "0123456789"
	hexd   = "0123456789abcdef"
)

type fakeGen struct{ r *rand.Rand }

func (g fakeGen) s(n int, alphabet string) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = alphabet[g.r.IntN(len(alphabet))]
	}
	return string(b)
}

// plantedSecret is one fake credential: the text planted in a document,
// the secret part that must never come back, and the rule expected to
// remove it.
type plantedSecret struct {
	name   string
	text   string // the surrounding text with the secret in place
	secret string
	rule   string
}

func plantedSecrets() []plantedSecret {
	g := fakeGen{rand.New(rand.NewPCG(8, 1))}
	var ps []plantedSecret
	add := func(name, before, secret, after, rule string) {
		ps = append(ps, plantedSecret{name, before + secret + after, secret, rule})
	}
	add("aws", "export AWS_ACCESS_KEY_ID=", "AK"+"IA"+g.s(16, upper2), "\n", "aws-access-token")
	add("aws-sts", "creds: ", "AS"+"IA"+g.s(16, upper2), " (temporary)", "aws-access-token")
	pem := "-----BEGIN " + "RSA PRIVATE KEY-----\n" + g.s(64, b64) + "\n" + g.s(64, b64) + "\n" + g.s(20, b64) + "==\n-----END " + "RSA PRIVATE KEY-----"
	add("pem", "key file:\n", pem, "\nend", "private-key")
	gcpKey := "-----BEGIN " + "PRIVATE KEY-----\\n" + g.s(64, b64) + "\\n" + g.s(40, b64) + "\\n-----END " + "PRIVATE KEY-----\\n"
	add("gcp-service-account", `{"type": "service_account", "project_id": "demo", "private_key": "`, gcpKey, `", "client_email": "svc@demo.iam.example"}`, "private-key")
	add("azure", "AZURE_CLIENT_SECRET=", g.s(3, alnum)+"8Q"+"~"+g.s(34, alnum), "\n", "azure-ad-client-secret")
	add("github-pat", "token ", "gh"+"p_"+g.s(36, alnum), " used in CI", "github-pat")
	add("github-fine", "GH=", "github"+"_pat_"+g.s(82, alnum), "\n", "github-fine-grained-pat")
	add("gitlab", "use ", "gl"+"pat-"+g.s(20, alnum), " for the API", "gitlab-pat")
	add("slack", "SLACK=", "xo"+"xb-"+g.s(12, digits)+"-"+g.s(13, digits)+"-"+g.s(24, alnum), "\n", "slack-bot-token")
	add("stripe", "stripe.key = ", "sk"+"_live_"+g.s(24, alnum), "\n", "stripe-access-token")
	jwt := "e" + "yJ" + g.s(30, alnum) + ".e" + "yJ" + g.s(40, alnum) + "." + g.s(43, alnum)
	add("jwt", "cookie session=", jwt, "; path=/", "jwt")
	add("bearer", "Authorization: Bearer ", g.s(40, alnum), "\r\n", "bearer-token")
	add("password", "db url params: password=", "Tr0ub4"+"dor&9x!", " host=db", "password-assignment")
	add("password-quoted", `{"user": "admin", "password": "`, "hun"+"ter2x", `"}`, "password-assignment")
	add("yaml-secret", "client_secret: ", g.s(32, alnum), "\n", "")
	add("api_key", `api_key = "`, g.s(32, alnum), `"`, "")
	add("generic", "my_service_token = ", g.s(40, hexd), "\n", "generic-api-key")
	return ps
}

// cleanTexts hold no secret: code and prose full of secret-ish words.
var cleanTexts = []string{
	"func login(user, password string) error {\n\tpassword := getPassword()\n\tapiKey := os.Getenv(\"API_KEY\")\n\treturn check(user, password, apiKey)\n}\n",
	"The access token expires after one hour; refresh it with the refresh token endpoint.",
	"secret: ${VAULT_SECRET}\npassword: <your password here>\napi_key: xxxxxxxx\n",
	"primary_key = user_id\nkey_name = main\ntokenizer splits camelCase identifiers",
	"Bearer tokens are described in RFC 6750.",
	"kind: Secret\nmetadata:\n  name: tls\nsecret: my-tls-secret\nsecretName: web-tls\npassword: the.user.password",
	"日本語のテキスト、パスワードなし。",
}

func TestRedactSecretsTable(t *testing.T) {
	for _, p := range plantedSecrets() {
		r := RedactSecrets(p.text)
		if strings.Contains(r.Text, p.secret) {
			t.Errorf("%s: secret survives: %q", p.name, r.Text)
			continue
		}
		if r.Count != 1 {
			t.Errorf("%s: Count = %d, want 1 (%q, rules %v)", p.name, r.Count, r.Text, r.Rules)
		}
		if p.rule != "" && !slices.Equal(r.Rules, []string{p.rule}) {
			t.Errorf("%s: rules %v, want [%s] (%q)", p.name, r.Rules, p.rule, r.Text)
		}
		if len(r.Rules) == 1 && !strings.Contains(r.Text, "[REDACTED:"+r.Rules[0]+"]") {
			t.Errorf("%s: no marker in %q", p.name, r.Text)
		}
	}
	for _, s := range cleanTexts {
		if r := RedactSecrets(s); r.Count != 0 || r.Text != s {
			t.Errorf("clean text changed: %q → %q (%v)", s, r.Text, r.Rules)
		}
	}
	// Several secrets in one text, including overlapping detections.
	ps := plantedSecrets()
	all := ""
	for _, p := range ps {
		all += p.text + "\n"
	}
	r := RedactSecrets(all)
	for _, p := range ps {
		if strings.Contains(r.Text, p.secret) {
			t.Errorf("combined: %s survives", p.name)
		}
	}
	if r.Count != len(ps) {
		t.Errorf("combined: Count = %d, want %d\n%s", r.Count, len(ps), r.Text)
	}
}

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
	ps := plantedSecrets()
	vec := func(i int) []float32 { return []float32{1, float32(i%7) + 1, float32(i%3) - 1, 0.5} }
	var docs []contract.Document
	for i, p := range ps {
		docs = append(docs, contract.Document{ID: "ext-" + p.name, Content: "incident notes " + p.text,
			Vector: vec(i), Trust: contract.ExternalUnverified,
			Metadata: map[string]contract.Value{"note": contract.String("pasted " + p.text)}})
	}
	for i, s := range cleanTexts {
		docs = append(docs, contract.Document{ID: "clean-" + string(rune('a'+i)), Content: s, Vector: vec(100 + i),
			Trust: contract.ExternalUnverified, Metadata: map[string]contract.Value{"n": contract.Number(float64(i))}})
	}
	// Authoritative content is not redacted under "auto".
	authText := "export AWS_ACCESS_KEY_ID=" + "AK" + "IA" + fakeGen{rand.New(rand.NewPCG(9, 9))}.s(16, upper2)
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
			if strings.Contains(s, p.secret) {
				t.Errorf("%s leaks %s secret", where, p.name)
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
		id := "ext-" + p.name
		d, err := c.Get(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		leaks("Get("+id+")", envText(contract.Envelope{Content: d.Content, Metadata: d.Metadata}))
		if n, _ := d.Metadata[MetaRedactions].Num(); n != 2 { // content + "note"
			t.Errorf("%s: redactions = %v, want 2", id, d.Metadata[MetaRedactions])
		}
		if rules, ok := d.Metadata[MetaRedactionRules].List(); !ok || len(rules) != 1 || (p.rule != "" && rules[0] != p.rule) {
			t.Errorf("%s: redaction_rules = %v, want [%s]", id, rules, p.rule)
		}
		if d.VersionHash != VersionHash([]byte(docs[i].Content)) {
			t.Errorf("%s: version hash is not the hash of the source bytes before redaction", id)
		}
		// Lexical: the secret as a query, and each of its long analysed
		// terms, finds nothing that contains it — no posting holds it.
		res := mustSearch(t, c, contract.Query{Text: p.secret, Mode: contract.Lexical, TopK: 50})
		for _, h := range res.Hits {
			leaks("lexical hit "+h.DocID, envText(h))
		}
		for _, term := range c.an.Terms(p.secret) {
			if len(term) < 10 {
				continue
			}
			if r := mustSearch(t, c, contract.Query{Text: term, Mode: contract.Lexical}); len(r.Hits) > 0 {
				t.Errorf("%s: term %q of the secret is in the postings (%v)", p.name, term, ids(r.Hits))
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
		d, _, ok := sn.Get("ext-" + p.name)
		if !ok {
			t.Fatalf("stored ext-%s missing", p.name)
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
		if bytes.Contains(disk, []byte(p.secret)) {
			t.Errorf("%s secret is on disk", p.name)
		}
	}
	// Clean content is stored byte-identical, without redaction metadata.
	for i, s := range cleanTexts {
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
	p := plantedSecrets()[5] // github-pat
	text := "a " + p.text + " and " + plantedSecrets()[0].text
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
		if kept := strings.Contains(d.Content, p.secret); kept != (tc.want == 0) {
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

func FuzzRedactSecrets(f *testing.F) {
	for _, p := range plantedSecrets() {
		f.Add(p.text)
	}
	for _, s := range cleanTexts {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r := RedactSecrets(s)
		if r.Count == 0 {
			if r.Text != s {
				t.Fatalf("no redaction but text changed")
			}
			return
		}
		if got := strings.Count(r.Text, "[REDACTED:"); got < r.Count {
			t.Fatalf("%d markers for %d redactions", got, r.Count)
		}
		if !slices.IsSorted(r.Rules) {
			t.Fatalf("rules not sorted: %v", r.Rules)
		}
	})
}

func BenchmarkRedactSecrets(b *testing.B) {
	clean := strings.Repeat(cleanTexts[0]+cleanTexts[1], 8)
	ps := plantedSecrets()
	dirty := clean + ps[0].text + ps[10].text + ps[16].text
	cases := []struct{ name, s string }{{"kind=clean", clean}, {"kind=secrets", dirty}}
	// Real code: net/http/transport.go of the toolchain, when present.
	if src, err := os.ReadFile(filepath.Join(runtime.GOROOT(), "src", "net", "http", "transport.go")); err == nil {
		cases = append(cases, struct{ name, s string }{"kind=go-source", string(src)})
	}
	for _, bc := range cases {
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(int64(len(bc.s)))
			b.ReportAllocs()
			for b.Loop() {
				RedactSecrets(bc.s)
			}
		})
	}
}

// TestRedactionBeforeEmbedding: with a live embedder (embedding.go), the
// vectors are computed from the redacted text: the embedder never sees a
// planted secret, and a dense query made of a secret finds documents only
// through their redacted contents.
func TestRedactionBeforeEmbedding(t *testing.T) {
	f := &bowEmbedder{model: "fake-bow", dim: 16}
	_, c, _ := embedColl(t, f)
	ps := plantedSecrets()
	var docs []contract.Document
	for _, p := range ps {
		docs = append(docs, contract.Document{ID: p.name, Content: "ticket says " + p.text, Trust: contract.ExternalUnverified})
	}
	mustUpsert(t, c, docs...)
	f.mu.Lock()
	for _, call := range f.calls {
		for _, text := range call {
			for _, p := range ps {
				if strings.Contains(text, p.secret) {
					t.Errorf("the embedder saw the %s secret", p.name)
				}
			}
		}
	}
	f.mu.Unlock()
	for _, p := range ps {
		res := mustSearch(t, c, contract.Query{Text: p.secret, Mode: contract.Dense, TopK: len(ps)})
		if len(res.Hits) == 0 {
			t.Fatal("dense search found nothing")
		}
		for _, h := range res.Hits {
			for _, p2 := range ps {
				if strings.Contains(h.Content, p2.secret) {
					t.Errorf("dense hit %s holds the %s secret", h.DocID, p2.name)
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
	pat := plantedSecrets()[5].secret // github-pat
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

// TestRedactURIKeepsPasswords (review F2): passwords and tokens are removed
// also from URIs url.Parse rejects and from userinfo where url.Parse does
// not look for it (nested schemes, scheme-relative references), from a
// token used as the user name and from the fragment.
func TestRedactURIKeepsPasswords(t *testing.T) {
	pat := plantedSecrets()[5].secret // github-pat
	cases := []struct{ name, uri, secret string }{
		// '#' in the password: url.Parse cuts the fragment first, the
		// authority "alice:pa" has a non-numeric port and Parse fails.
		{"hash-in-password", "https://alice:pa#ssw0rd-9x@git.example.com/repo.git", "pa#ssw0rd-9x"},
		// A '%' not followed by two hex digits: invalid escape, Parse fails.
		{"bad-escape", "postgres://app:s3cr%t-pw-77@db.example.com/prod", "s3cr%t-pw-77"},
		// JDBC and other nested schemes parse as opaque: User is nil.
		{"jdbc", "jdbc:postgresql://app:Hunter2-jdbc-pw@db.example.com:5432/prod", "Hunter2-jdbc-pw"},
		// Scheme-relative reference (no "://").
		{"scheme-relative", "//alice:Tr0ub4dor-rel-9x@git.example.com/repo.git", "Tr0ub4dor-rel-9x"},
		// A token as the user name (git clone https://<PAT>@github.com/...):
		// only a password is dropped, the user name is kept verbatim.
		{"token-as-username", "https://" + pat + "@github.com/team/repo.git", pat},
		// OAuth implicit flow: the token is in the fragment, never looked at.
		{"fragment-token", "https://app.example.com/callback#access_token=" + pat + "&state=x", pat},
	}
	for _, tc := range cases {
		got, n, _ := redactURI(tc.uri)
		if strings.Contains(got, tc.secret) {
			t.Errorf("%s: redactURI(%q) = %q (%d redactions): secret kept", tc.name, tc.uri, got, n)
		}
	}
}

// TestRedactURIRewritesPath (review F5): removing a password changes
// nothing else: no re-escaping of the path, no lower-casing of the scheme.
func TestRedactURIRewritesPath(t *testing.T) {
	for _, tc := range []struct{ uri, want string }{
		{"https://alice:pw-Tr0ub4dor@host.example.com/My Docs/a b.md", "https://alice@host.example.com/My Docs/a b.md"},
		{"HTTPS://alice:pw-Tr0ub4dor@host.example.com/x.md", "HTTPS://alice@host.example.com/x.md"},
	} {
		if got, _, _ := redactURI(tc.uri); got != tc.want {
			t.Errorf("redactURI(%q) = %q, want %q (only the password removed)", tc.uri, got, tc.want)
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
	pat := plantedSecrets()[5].secret
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

// TestRedactURIQueryOverreach (review F4): the password-assignment rule's
// value class [^\s"'`,;]{4,200} does not stop at '&'; query parameters are
// redacted one by one, so ?api_key=x&page=3 keeps page=3.
func TestRedactURIQueryOverreach(t *testing.T) {
	got, _, _ := redactURI("https://files.example.com/report?api_key=hunter2-key&page=3&lang=en")
	if !strings.Contains(got, "page=3") || !strings.Contains(got, "lang=en") {
		t.Errorf("redactURI dropped the parameters after api_key: %q", got)
	}
}

// TestRedactURISecretInPath (review F6): secrets that live in the path (a
// Slack webhook URL, which the content rules redact as slack-webhook-url)
// are removed from the stored SourceURI too.
func TestRedactURISecretInPath(t *testing.T) {
	const hook = "https://hooks.slack.com/services/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"
	if r := RedactSecrets("notify " + hook + " on failure"); r.Count == 0 {
		t.Fatal("content rules do not flag the sample webhook; test input needs adjusting")
	}
	if got, _, _ := redactURI(hook); strings.Contains(got, "Zx81Kq02LmNp93RsTu47VwXy") {
		t.Errorf("redactURI kept the webhook secret that content redaction removes: %q", got)
	}
}

// TestRedactURIForms: redactURI's exact output, count and rules on each
// URI form it handles, and URIs it must leave byte-identical.
func TestRedactURIForms(t *testing.T) {
	pat := plantedSecrets()[5].secret // github-pat
	const hook = "https://hooks.slack.com/services/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"
	for _, tc := range []struct {
		uri, want string
		rules     []string // one per removal
	}{
		{"https://alice:pa#ssw0rd-9x@git.example.com/repo.git", "https://alice@git.example.com/repo.git", []string{RuleURIPassword}},
		{"postgres://app:s3cr%t-pw-77@db.example.com/prod", "postgres://app@db.example.com/prod", []string{RuleURIPassword}},
		{"jdbc:postgresql://app:Hunter2-jdbc-pw@db.example.com:5432/prod?ssl=true", "jdbc:postgresql://app@db.example.com:5432/prod?ssl=true", []string{RuleURIPassword}},
		{"//alice:Tr0ub4dor-rel-9x@git.example.com/repo.git", "//alice@git.example.com/repo.git", []string{RuleURIPassword}},
		{"HTTPS://alice:p@ss?w0rd@Host.Example.com/My%20Docs/a b.md#L3", "HTTPS://alice@Host.Example.com/My%20Docs/a b.md#L3", []string{RuleURIPassword}},
		{"https://" + pat + "@github.com/team/repo.git", "https://[REDACTED:github-pat]@github.com/team/repo.git", []string{"github-pat"}},
		{"https://x-access-token:" + pat + "@github.com/team/repo.git", "https://x-access-token@github.com/team/repo.git", []string{RuleURIPassword}},
		{"https://" + pat + ":x-oauth-basic@github.com/r.git", "https://[REDACTED:github-pat]@github.com/r.git", []string{"github-pat", RuleURIPassword}},
		{"https://app.example.com/cb#access_token=" + pat + "&state=x", "https://app.example.com/cb#access_token=[REDACTED:github-pat]&state=x", []string{"github-pat"}},
		{"https://files.example.com/report?api_key=hunter2-key&page=3&lang=en", "https://files.example.com/report?api_key=[REDACTED:password-assignment]&page=3&lang=en", []string{"password-assignment"}},
		{"https://h.example.com/x?password=Tr0ub4dor-9x;v=2&token=" + pat + "#frag", "https://h.example.com/x?password=[REDACTED:password-assignment];v=2&token=[REDACTED:github-pat]#frag", []string{"password-assignment", "github-pat"}},
		{hook, "https://[REDACTED:slack-webhook-url]", []string{"slack-webhook-url"}},
		{hook + "?x=1", "https://[REDACTED:slack-webhook-url]?x=1", []string{"slack-webhook-url"}},
		{"file:///srv/tokens/" + pat + ".txt", "file:///srv/tokens/[REDACTED:github-pat].txt", []string{"github-pat"}},
		{"jdbc:sqlserver://db:1433;user=sa;password=Hunter2!x", "jdbc:sqlserver://db:1433;user=sa;password=[REDACTED:password-assignment]", []string{"password-assignment"}},
		// Clean: byte-identical.
		{"file:///srv/notes/9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08.md", "", nil},
		{"file:///repo/a.go#L10-L42", "", nil},
		{"https://medium.com/@alice/post-1", "", nil},
		{"https://example.com?time=10:30&mail=a@b.com", "", nil},
		{"mailto:alice@example.com", "", nil},
		{"https://alice@git.example.com/team/repo.git", "", nil},
		{"https://alice:@host.example.com/x", "", nil}, // empty password
		{"https://wiki.example.com/Secret:Recipes/2024", "", nil},
		{"https://docs.example.com/api/auth,token-endpoint/v2", "", nil},
		{"HTTPS://Host.Example.com/My%20Docs/a b.md?page=3&lang=en#Intro", "", nil},
		{"/srv/notes/a.md", "", nil},
		{"", "", nil},
	} {
		want := tc.want
		if tc.rules == nil {
			want = tc.uri
		}
		got, n, rules := redactURI(tc.uri)
		if got != want || n != len(tc.rules) || !slices.Equal(rules, tc.rules) {
			t.Errorf("redactURI(%q) = %q, %d, %v; want %q, %d, %v", tc.uri, got, n, rules, want, len(tc.rules), tc.rules)
		}
		forms := uriMatchForms(tc.uri)
		wantForms := []string{tc.uri}
		if tc.rules != nil {
			wantForms = append(wantForms, want)
		}
		if !slices.Equal(forms, wantForms) {
			t.Errorf("uriMatchForms(%q) = %q, want %q", tc.uri, forms, wantForms)
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
	pat := plantedSecrets()[5].secret
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

// FuzzRedactURI: redactURI never panics; a URI it reports nothing in comes
// back unchanged; a password planted as scheme://user:pw@rest (any of the
// forms: https, scheme-relative, nested jdbc:postgresql, a fuzzed scheme) is
// never in the output; URIs over an alphabet no rule can fire on are
// returned byte-identical.
func FuzzRedactURI(f *testing.F) {
	pat := plantedSecrets()[5].secret
	f.Add("https://alice:pa#ssw0rd-9x@git.example.com/repo.git", uint8(0), "alice", "pa#ss@w0rd?x", "git.example.com/repo.git", "a/b?c=1#d")
	f.Add("postgres://app:s3cr%t-pw-77@db.example.com/prod", uint8(1), "", "s3cr%t", "db:5432/prod?x=1&y=2", "h@g/1")
	f.Add("jdbc:postgresql://app:Hunter2@db.example.com:5432/prod", uint8(2), "app", "Hunter2", "db@x/y", "")
	f.Add("//alice:pw@h/x", uint8(3), "alice", "pw", "h?q=a@b/x", "%2f;a")
	f.Add("https://"+pat+"@github.com/team/repo.git", uint8(4), pat, pat, "github.com/"+pat, "")
	f.Add("https://app.example.com/cb#access_token="+pat+"&state=x", uint8(5), "u", "p", "", "")
	f.Add("https://files.example.com/report?api_key=hunter2-key&page=3&lang=en", uint8(6), "GIT+SSH", "x", "h", "")
	f.Add("https://hooks.slack.com/services/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", uint8(7), "", "", "", "")
	f.Add("jdbc:sqlserver://db:1433;user=sa;password=Hunter2!x", uint8(0), "", "", "", "")
	f.Add("https://example.com?time=10:30&mail=a@b.com", uint8(0), "", "", "", "")
	const cleanAlphabet = "abcdfgh0123456789./?#&%;"
	var markers strings.Builder
	for _, r := range secretRules {
		markers.WriteString("[REDACTED:" + r.id + "]")
	}
	f.Fuzz(func(t *testing.T, raw string, form uint8, user, pw, rest, clean string) {
		got, n, rules := redactURI(raw)
		if n == 0 && (got != raw || len(rules) != 0) {
			t.Fatalf("redactURI(%q) = %q, %d, %v: changed without a redaction", raw, got, n, rules)
		}
		if n > 0 && len(rules) < 1 {
			t.Fatalf("redactURI(%q): %d redactions without a rule", raw, n)
		}
		if utf8.ValidString(raw) && !utf8.ValidString(got) {
			t.Fatalf("redactURI(%q) = %q: invalid UTF-8", raw, got)
		}
		if fs := uriMatchForms(raw); fs[0] != raw || len(fs) > 2 || len(fs) == 2 && fs[1] != got {
			t.Fatalf("uriMatchForms(%q) = %q", raw, fs)
		}

		// Planted password. The user name holds none of ":@/?#", the
		// password no '/' (RFC 3986 forbids it unescaped; it ends the
		// authority). The password is framed by 'Q', a byte no marker
		// holds, so an occurrence in the output cannot straddle a marker;
		// inputs where it occurs in the rest of the URI are skipped.
		var prefix string
		switch form % 4 {
		case 0:
			prefix = "https://"
		case 1:
			prefix = "//"
		case 2:
			prefix = "jdbc:postgresql://"
		default:
			sch := strings.Map(func(r rune) rune {
				if r < 0x80 && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '+' || r == '.' || r == '-') {
					return r
				}
				return -1
			}, user)
			if sch == "" || schemeLen(sch+":") == 0 {
				sch = "git+ssh"
			}
			prefix = sch + "://"
		}
		u := strings.Map(func(r rune) rune {
			if strings.ContainsRune(":@/?#", r) {
				return -1
			}
			return r
		}, user)
		p := "Q" + strings.ReplaceAll(pw, "/", "") + "Q"
		planted := prefix + u + ":" + p + "@" + rest
		if !strings.Contains(prefix+u+"@"+rest, p) && !strings.Contains(p, "[REDACTED:") && !strings.Contains(markers.String(), p) {
			got, n, rules := redactURI(planted)
			if strings.Contains(got, p) {
				t.Fatalf("redactURI(%q) = %q: password %q kept", planted, got, p)
			}
			if n < 1 || !slices.Contains(rules, RuleURIPassword) {
				t.Fatalf("redactURI(%q) = %q, %d, %v: password not counted", planted, got, n, rules)
			}
		}

		// Clean URIs: no rule fires over cleanAlphabet, and there is no
		// password; they come back byte-identical.
		cl := strings.Map(func(r rune) rune { return rune(cleanAlphabet[int(r)%len(cleanAlphabet)]) }, clean)
		for _, c := range []string{"https://h.org/" + cl, "https://" + cl + "@h.org/" + cl, cl} {
			if got, n, _ := redactURI(c); got != c || n != 0 {
				t.Fatalf("clean redactURI(%q) = %q, %d", c, got, n)
			}
		}
	})
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
