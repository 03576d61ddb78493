package main

import (
	"fmt"

	"github.com/stratasearch/strata/ingest"
)

// searchOptions maps the search flags --definitions and --priors to
// ingest.SearchOptions.
func searchOptions(defs string, priors bool) (ingest.SearchOptions, error) {
	o := ingest.SearchOptions{NoPriors: !priors}
	switch defs {
	case "auto":
		o.Definitions = ingest.DefsAuto
	case "always":
		o.Definitions = ingest.DefsAlways
	case "off":
		o.Definitions = ingest.DefsOff
	default:
		return o, fmt.Errorf("search: --definitions %q: want auto, always or off", defs)
	}
	return o, nil
}
