//go:build !cgo

package lang

// Available reports whether the tree-sitter parsers are built in.
func Available() bool { return false }

// Parse returns ErrUnavailable: this build has no cgo.
func Parse(lang string, src []byte) (*File, error) {
	if !Supported(lang) {
		return nil, ErrUnsupported
	}
	return nil, ErrUnavailable
}

// ParsePhases is Parse: it returns ErrUnavailable or ErrUnsupported.
func ParsePhases(lang string, src []byte, ph *Phases) (*File, error) { return Parse(lang, src) }
