// Package redacttest provides the fake secrets and clean texts the tests
// of package redact and of the engine's redaction at ingest share. Every
// fake secret is assembled at run time from fragments and a seeded
// generator, so the repository itself holds no string a secret scanner
// would flag.
package redacttest

import "math/rand/v2"

// Alphabets of the generated secrets.
const (
	Alnum  = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	Upper2 = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"
	B64    = Alnum + "+/"
	Digits = "0123456789"
	Hex    = "0123456789abcdef"
)

// Gen draws random strings from a seeded generator.
type Gen struct{ R *rand.Rand }

// S returns n bytes drawn from alphabet.
func (g Gen) S(n int, alphabet string) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = alphabet[g.R.IntN(len(alphabet))]
	}
	return string(b)
}

// Planted is one fake credential: the text planted in a document, the
// secret part that must never come back, and the rule expected to remove
// it ("" = any rule).
type Planted struct {
	Name   string
	Text   string // the surrounding text with the secret in place
	Secret string
	Rule   string
}

// PlantedSecrets returns the same fake credentials on every call, one per
// detector family (cloud keys, private keys, tokens, passwords, …). Index
// 0 is an AWS access key id, index 5 a GitHub personal access token.
func PlantedSecrets() []Planted {
	g := Gen{rand.New(rand.NewPCG(8, 1))}
	var ps []Planted
	add := func(name, before, secret, after, rule string) {
		ps = append(ps, Planted{name, before + secret + after, secret, rule})
	}
	add("aws", "export AWS_ACCESS_KEY_ID=", "AK"+"IA"+g.S(16, Upper2), "\n", "aws-access-token")
	add("aws-sts", "creds: ", "AS"+"IA"+g.S(16, Upper2), " (temporary)", "aws-access-token")
	pem := "-----BEGIN " + "RSA PRIVATE KEY-----\n" + g.S(64, B64) + "\n" + g.S(64, B64) + "\n" + g.S(20, B64) + "==\n-----END " + "RSA PRIVATE KEY-----"
	add("pem", "key file:\n", pem, "\nend", "private-key")
	gcpKey := "-----BEGIN " + "PRIVATE KEY-----\\n" + g.S(64, B64) + "\\n" + g.S(40, B64) + "\\n-----END " + "PRIVATE KEY-----\\n"
	add("gcp-service-account", `{"type": "service_account", "project_id": "demo", "private_key": "`, gcpKey, `", "client_email": "svc@demo.iam.example"}`, "private-key")
	add("azure", "AZURE_CLIENT_SECRET=", g.S(3, Alnum)+"8Q"+"~"+g.S(34, Alnum), "\n", "azure-ad-client-secret")
	add("github-pat", "token ", "gh"+"p_"+g.S(36, Alnum), " used in CI", "github-pat")
	add("github-fine", "GH=", "github"+"_pat_"+g.S(82, Alnum), "\n", "github-fine-grained-pat")
	add("gitlab", "use ", "gl"+"pat-"+g.S(20, Alnum), " for the API", "gitlab-pat")
	add("slack", "SLACK=", "xo"+"xb-"+g.S(12, Digits)+"-"+g.S(13, Digits)+"-"+g.S(24, Alnum), "\n", "slack-bot-token")
	add("stripe", "stripe.key = ", "sk"+"_live_"+g.S(24, Alnum), "\n", "stripe-access-token")
	jwt := "e" + "yJ" + g.S(30, Alnum) + ".e" + "yJ" + g.S(40, Alnum) + "." + g.S(43, Alnum)
	add("jwt", "cookie session=", jwt, "; path=/", "jwt")
	add("bearer", "Authorization: Bearer ", g.S(40, Alnum), "\r\n", "bearer-token")
	add("password", "db url params: password=", "Tr0ub4"+"dor&9x!", " host=db", "password-assignment")
	add("password-quoted", `{"user": "admin", "password": "`, "hun"+"ter2x", `"}`, "password-assignment")
	add("yaml-secret", "client_secret: ", g.S(32, Alnum), "\n", "")
	add("api_key", `api_key = "`, g.S(32, Alnum), `"`, "")
	add("generic", "my_service_token = ", g.S(40, Hex), "\n", "generic-api-key")
	return ps
}

// CleanTexts hold no secret: code and prose full of secret-ish words.
var CleanTexts = []string{
	"func login(user, password string) error {\n\tpassword := getPassword()\n\tapiKey := os.Getenv(\"API_KEY\")\n\treturn check(user, password, apiKey)\n}\n",
	"The access token expires after one hour; refresh it with the refresh token endpoint.",
	"secret: ${VAULT_SECRET}\npassword: <your password here>\napi_key: xxxxxxxx\n",
	"primary_key = user_id\nkey_name = main\ntokenizer splits camelCase identifiers",
	"Bearer tokens are described in RFC 6750.",
	"kind: Secret\nmetadata:\n  name: tls\nsecret: my-tls-secret\nsecretName: web-tls\npassword: the.user.password",
	"日本語のテキスト、パスワードなし。",
}
