package datasets

import (
	"errors"
	"fmt"
	"runtime"
)

// Limits on header values that readers accept before allocating. A header
// beyond them is reported as corruption rather than trusted.
const (
	// MaxDim is the largest vector dimension accepted by the fvecs / ivecs /
	// bvecs readers (a 1M-dimensional float32 row is 4 MiB).
	MaxDim = 1 << 20
	// MaxIDXItemBytes is the largest idx-ubyte item (product of the
	// non-leading dimensions) accepted, 16 MiB.
	MaxIDXItemBytes = 1 << 24
)

// Default values used by Options.EnsureDefaults.
const (
	DefaultK            = 100
	DefaultGloVeQueries = 10000
	// DefaultGloVeSeed is the fixed seed of the glove-6b-100-angular query
	// hold-out (see SelectHoldout). Changing it changes the data set.
	DefaultGloVeSeed uint64 = 0x5354524154412d31 // "STRATA-1"
)

// Options configures ground-truth computation and the GloVe conversion.
// The zero value means "all defaults"; call EnsureDefaults then Validate.
type Options struct {
	// K is the number of exact neighbours computed per query. Default 100
	// (DefaultK).
	K int
	// Workers is the number of goroutines used by GroundTruth. Default
	// runtime.GOMAXPROCS(0).
	Workers int
	// GloVeQueries is how many words ConvertGloVe holds out as queries.
	// Default 10,000 (DefaultGloVeQueries).
	GloVeQueries int
	// GloVeSeed seeds the hold-out selection (SelectHoldout). 0 means the
	// default DefaultGloVeSeed, so seed 0 itself cannot be chosen.
	GloVeSeed uint64
}

// EnsureDefaults fills zero fields with their defaults and returns o.
func (o *Options) EnsureDefaults() *Options {
	if o.K == 0 {
		o.K = DefaultK
	}
	if o.Workers == 0 {
		o.Workers = runtime.GOMAXPROCS(0)
	}
	if o.GloVeQueries == 0 {
		o.GloVeQueries = DefaultGloVeQueries
	}
	if o.GloVeSeed == 0 {
		o.GloVeSeed = DefaultGloVeSeed
	}
	return o
}

// Validate reports every invalid field (joined with errors.Join), or nil.
func (o *Options) Validate() error {
	var errs []error
	if o.K < 1 {
		errs = append(errs, fmt.Errorf("datasets: Options.K = %d, want >= 1", o.K))
	}
	if o.Workers < 1 {
		errs = append(errs, fmt.Errorf("datasets: Options.Workers = %d, want >= 1", o.Workers))
	}
	if o.GloVeQueries < 1 {
		errs = append(errs, fmt.Errorf("datasets: Options.GloVeQueries = %d, want >= 1", o.GloVeQueries))
	}
	return errors.Join(errs...)
}
