package engine

import (
	"errors"
	"testing"
)

func FuzzParseConfig(f *testing.F) {
	f.Add([]byte(`{"format_version":1,"name":"c","options":{"dim":4,"metric":"l2","analyzer":"code","sync":"none","on_stale":"drop"}}`))
	f.Add([]byte(`{"format_version":2,"name":"c","options":{"dim":4}}`))
	f.Add([]byte(`{"format_version":1,"name":"c","options":{"dim":0,"bogus":1}}`))
	f.Add([]byte(`{"format_version":1,"name":"c","options":{"dim":4}} {}`))
	f.Add([]byte(`not json`))
	f.Fuzz(func(t *testing.T, b []byte) {
		cfg, err := parseConfig(b, "/x/c/collection.json")
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("error not ErrCorrupt: %v", err)
			}
			return
		}
		if cfg.Name != "c" || cfg.Options.Validate() != nil {
			t.Fatalf("accepted invalid config %+v", cfg)
		}
	})
}
