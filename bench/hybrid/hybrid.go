package hybrid

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"time"

	"github.com/stratasearch/strata/datasets"
	"github.com/stratasearch/strata/engine/embed"
)

// Config configures Run. Zero values get the defaults named per field.
type Config struct {
	// DatasetsDir holds cranfield/ and vaswani/. Default datasets.Dir().
	DatasetsDir string
	// Collections to run. Default {"cranfield", "vaswani"}; cross-collection
	// transfer needs both.
	Collections []string
	// Resamples of the paired bootstrap (≥ 1). Default 10,000.
	Resamples int
	// Seed of the bootstrap and of the cross-validation fold split.
	// Default 1.
	Seed uint64
	// Folds of the within-collection cross-validation (≥ 2). Default 5.
	Folds int
	// Goal is the required nDCG@10 gain over lexical. Default 0.01.
	Goal float64
	// Log receives progress lines. Default io.Discard.
	Log io.Writer
	// Command is recorded in the result.
	Command string
	// Embedder, when set, embeds the documents (their indexed text) and
	// the queries instead of reading the collections' use512-*.fvecs.
	// Default nil (the USE-Lite vectors).
	Embedder embed.Embedder
}

// EnsureDefaults fills the zero fields.
func (c *Config) EnsureDefaults() {
	if len(c.Collections) == 0 {
		c.Collections = []string{"cranfield", "vaswani"}
	}
	if c.Resamples == 0 {
		c.Resamples = 10000
	}
	if c.Seed == 0 {
		c.Seed = 1
	}
	if c.Folds == 0 {
		c.Folds = 5
	}
	if c.Goal == 0 {
		c.Goal = 0.01
	}
	if c.Log == nil {
		c.Log = io.Discard
	}
}

// Validate reports every problem with c.
func (c *Config) Validate() error {
	var errs []error
	if c.Resamples < 1 {
		errs = append(errs, fmt.Errorf("hybrid: Resamples = %d, want ≥ 1", c.Resamples))
	}
	if c.Folds < 2 {
		errs = append(errs, fmt.Errorf("hybrid: Folds = %d, want ≥ 2", c.Folds))
	}
	for _, n := range c.Collections {
		if n != "cranfield" && n != "vaswani" {
			errs = append(errs, fmt.Errorf("hybrid: unknown collection %q (want cranfield or vaswani)", n))
		}
	}
	return errors.Join(errs...)
}

// Row is one method on one collection.
type Row struct {
	Collection string  `json:"collection"`
	Label      string  `json:"label"`
	Spec       Spec    `json:"spec"`
	NDCG10     float64 `json:"ndcg10"` // binary gain
	MAP        float64 `json:"map"`    // over the returned list (≤ 1000)
	R100       float64 `json:"r100"`
	// VsLexical is the paired bootstrap of nDCG@10(method) − nDCG@10(lexical).
	VsLexical *CI `json:"vs_lexical,omitempty"`
	// Tuned says how the parameters were chosen: "fixed" (literature
	// default), "in-sample" (best on this collection's own queries: NOT a
	// valid estimate), "transfer from X" or "k-fold CV".
	Tuned string `json:"tuned"`
}

// Transfer is one tune-on-A, test-on-B experiment of one family.
type Transfer struct {
	Family      string  `json:"family"`
	TrainOn     string  `json:"train_on"`
	TestOn      string  `json:"test_on"`
	Chosen      Spec    `json:"chosen"`
	TrainNDCG10 float64 `json:"train_ndcg10"`
	Test        Row     `json:"test"`
}

// CV is one family's k-fold cross-validation within one collection: each
// fold's queries are ranked with the spec that is best on the other folds.
type CV struct {
	Family string `json:"family"`
	Row    Row    `json:"row"`
	Chosen []Spec `json:"chosen_per_fold"`
}

// Result is the JSON output of Run.
type Result struct {
	Command   string         `json:"command"`
	Vectors   string         `json:"vectors"` // "use512" or the Config.Embedder's model
	Started   time.Time      `json:"started"`
	Seconds   float64        `json:"seconds"`
	Resamples int            `json:"resamples"`
	Seed      uint64         `json:"seed"`
	Folds     int            `json:"folds"`
	Goal      float64        `json:"goal_ndcg10_gain"`
	Queries   map[string]int `json:"judged_queries"`
	Baselines []Row          `json:"baselines"`
	GridSize  map[string]int `json:"grid_size"`
	InSample  []Row          `json:"in_sample_best"`
	Transfers []Transfer     `json:"transfers"`
	CV        []CV           `json:"cv"`
	Default   Default        `json:"default"`
}

// Default is the recommended engine default and its held-out evidence.
type Default struct {
	Spec      Spec   `json:"spec"`
	Rationale string `json:"rationale"`
	// Rows are the default's results on each collection (fixed parameters).
	Rows    []Row `json:"rows"`
	GoalMet bool  `json:"goal_met"`
}

// Families tuned, in report order.
var Families = []string{FamRRF, FamMinMax, FamZScore, FamMaxNorm, FamRerankM, FamRerankZ, FamRerankX, FamRerankPRF}

// Grid returns the parameter grid of a family.
func Grid(family string) []Spec {
	alphas := []float64{0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.5, 0.6}
	var g []Spec
	switch family {
	case FamRRF:
		for _, k := range []float64{10, 30, 60, 100} {
			for _, w := range []float64{0.1, 0.2, 0.3, 0.4, 0.5, 0.7, 1} {
				for _, win := range []int{100, 1000} {
					for _, top := range []int{0, 20, 50} {
						g = append(g, Spec{Family: FamRRF, K: k, DenseWeight: w, Window: win, DenseTop: top})
					}
				}
			}
		}
	case FamMinMax, FamZScore, FamMaxNorm:
		for _, a := range alphas {
			for _, win := range []int{100, 1000} {
				g = append(g, Spec{Family: family, Alpha: a, Window: win})
			}
		}
	case FamRerankM, FamRerankZ, FamRerankX:
		for _, a := range alphas {
			for _, n := range []int{20, 50, 100, 1000} {
				g = append(g, Spec{Family: family, Alpha: a, Window: n})
			}
		}
	case FamRerankPRF:
		for _, a := range alphas {
			for _, n := range []int{20, 50, 100} {
				for _, fb := range []int{3, 5, 10} {
					for _, beta := range []float64{0.5, 0.8, 1} {
						g = append(g, Spec{Family: family, Alpha: a, Window: n, Feedback: fb, Beta: beta})
					}
				}
			}
		}
	}
	return g
}

// fixedSpecs are the untuned reference settings of task 1.
var fixedSpecs = []Spec{
	{Family: FamLexical},
	{Family: FamDense},
	{Family: FamRRF, K: 60, DenseWeight: 1, Window: 100},
	{Family: FamRRF, K: 60, DenseWeight: 0.5, Window: 100},
	{Family: FamMinMax, Alpha: 0.5, Window: 100},
	{Family: FamZScore, Alpha: 0.5, Window: 100},
	// The engine's HybridRerankMaxNorm (RerankDenseWeight 0.35,
	// RerankWindow 20).
	{Family: FamRerankX, Alpha: 0.35, Window: 20},
	// The rerank-maxnorm setting of code collections `searchd index`
	// creates with the built-in embedder (N 100, α 0.35).
	{Family: FamRerankX, Alpha: 0.35, Window: 100},
}

type evaluated struct {
	spec Spec
	pq   perQuery
}

// Run loads the collections, evaluates the fixed methods and every grid
// point, and runs the held-out protocols. It honours ctx between methods.
func Run(ctx context.Context, cfg Config) (Result, error) {
	cfg.EnsureDefaults()
	if err := cfg.Validate(); err != nil {
		return Result{}, err
	}
	if cfg.DatasetsDir == "" {
		d, err := datasets.Dir()
		if err != nil {
			return Result{}, fmt.Errorf("hybrid: %w", err)
		}
		cfg.DatasetsDir = d
	}
	start := time.Now()
	var cols []*collection
	for _, n := range cfg.Collections {
		c, err := loadCollection(ctx, cfg.DatasetsDir, n, cfg.Embedder)
		if err != nil {
			return Result{}, err
		}
		fmt.Fprintf(cfg.Log, "hybrid: %s: %d docs, %d judged queries\n", n, len(c.DocIDs), len(c.Queries))
		cols = append(cols, c)
	}
	res, err := study(ctx, cfg, cols)
	res.Command, res.Started, res.Seconds = cfg.Command, start.UTC(), time.Since(start).Seconds()
	res.Vectors = "use512"
	if cfg.Embedder != nil {
		res.Vectors = cfg.Embedder.Model()
	}
	return res, err
}

// study runs the protocol over prepared collections.
func study(ctx context.Context, cfg Config, cols []*collection) (Result, error) {
	res := Result{Resamples: cfg.Resamples, Seed: cfg.Seed, Folds: cfg.Folds, Goal: cfg.Goal,
		Queries: map[string]int{}, GridSize: map[string]int{}}
	boot := func(lex, m perQuery) (*CI, error) {
		ci, err := PairedBootstrap(lex.NDCG10, m.NDCG10, cfg.Resamples, 0.95, cfg.Seed)
		return &ci, err
	}
	row := func(c *collection, s Spec, pq perQuery, lex perQuery, tuned string) (Row, error) {
		nd, ap, r := pq.means()
		r0 := Row{Collection: c.Name, Label: s.String(), Spec: s, NDCG10: nd, MAP: ap, R100: r, Tuned: tuned}
		if s.Family != FamLexical {
			ci, err := boot(lex, pq)
			if err != nil {
				return r0, err
			}
			r0.VsLexical = ci
		}
		return r0, nil
	}
	lexOf := map[string]perQuery{}
	grids := map[string]map[string][]evaluated{} // collection → family → grid
	for _, c := range cols {
		res.Queries[c.Name] = len(c.Queries)
		run, err := c.run(Spec{Family: FamLexical})
		if err != nil {
			return res, err
		}
		lex, err := c.evaluate(run)
		if err != nil {
			return res, err
		}
		lexOf[c.Name] = lex
		for _, s := range fixedSpecs {
			run, err := c.run(s)
			if err != nil {
				return res, err
			}
			pq, err := c.evaluate(run)
			if err != nil {
				return res, err
			}
			r, err := row(c, s, pq, lex, "fixed")
			if err != nil {
				return res, err
			}
			res.Baselines = append(res.Baselines, r)
		}
		grids[c.Name] = map[string][]evaluated{}
		for _, fam := range Families {
			g := Grid(fam)
			res.GridSize[fam] = len(g)
			for _, s := range g {
				if err := ctx.Err(); err != nil {
					return res, err
				}
				run, err := c.run(s)
				if err != nil {
					return res, err
				}
				pq, err := c.evaluate(run)
				if err != nil {
					return res, err
				}
				grids[c.Name][fam] = append(grids[c.Name][fam], evaluated{s, pq})
			}
			best := bestOf(grids[c.Name][fam], nil)
			r, err := row(c, best.spec, best.pq, lex, "in-sample")
			if err != nil {
				return res, err
			}
			res.InSample = append(res.InSample, r)
			fmt.Fprintf(cfg.Log, "hybrid: %s %s: %d grid points, in-sample best %s nDCG@10 %.4f\n", c.Name, fam, len(g), best.spec, r.NDCG10)
		}
	}
	// Cross-collection transfer.
	for _, fam := range Families {
		for _, a := range cols {
			for _, b := range cols {
				if a == b {
					continue
				}
				best := bestOf(grids[a.Name][fam], nil)
				test, ok := find(grids[b.Name][fam], best.spec)
				if !ok {
					return res, fmt.Errorf("hybrid: %s not in %s's grid", best.spec, b.Name)
				}
				r, err := row(b, best.spec, test.pq, lexOf[b.Name], "transfer from "+a.Name)
				if err != nil {
					return res, err
				}
				res.Transfers = append(res.Transfers, Transfer{Family: fam, TrainOn: a.Name, TestOn: b.Name,
					Chosen: best.spec, TrainNDCG10: mean(best.pq.NDCG10), Test: r})
			}
		}
	}
	// k-fold CV within each collection.
	for _, c := range cols {
		n := len(c.Queries)
		perm := rand.New(rand.NewPCG(cfg.Seed, 0x5eed)).Perm(n)
		fold := make([]int, n)
		for i, qi := range perm {
			fold[qi] = i % cfg.Folds
		}
		for _, fam := range Families {
			g := grids[c.Name][fam]
			held := perQuery{NDCG10: make([]float64, n), AP: make([]float64, n), R100: make([]float64, n)}
			var chosen []Spec
			for f := range cfg.Folds {
				train := func(qi int) bool { return fold[qi] != f }
				best := bestOf(g, train)
				chosen = append(chosen, best.spec)
				for qi := range n {
					if fold[qi] == f {
						held.NDCG10[qi], held.AP[qi], held.R100[qi] = best.pq.NDCG10[qi], best.pq.AP[qi], best.pq.R100[qi]
					}
				}
			}
			r, err := row(c, Spec{Family: fam}, held, lexOf[c.Name], fmt.Sprintf("%d-fold CV", cfg.Folds))
			if err != nil {
				return res, err
			}
			r.Label = fam + " (per-fold tuned)"
			res.CV = append(res.CV, CV{Family: fam, Row: r, Chosen: chosen})
		}
	}
	d, err := chooseDefault(cfg, res, cols, grids, lexOf, row)
	res.Default = d
	return res, err
}

// bestOf returns the grid point with the highest mean nDCG@10 over the
// queries where use(qi) is true (all when use is nil); ties go to the
// earlier grid point.
func bestOf(g []evaluated, use func(int) bool) evaluated {
	bi, bv := 0, -1.0
	for i, e := range g {
		var s float64
		for qi, v := range e.pq.NDCG10 {
			if use == nil || use(qi) {
				s += v
			}
		}
		if s > bv+1e-12 {
			bi, bv = i, s
		}
	}
	return g[bi]
}

func find(g []evaluated, s Spec) (evaluated, bool) {
	for _, e := range g {
		if e.spec == s {
			return e, true
		}
	}
	return evaluated{}, false
}
