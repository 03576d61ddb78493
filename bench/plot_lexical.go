package bench

import (
	"fmt"
	"math"
	"path/filepath"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"

	"github.com/stratasearch/strata/bench/lexical"
)

// groupTicks labels the integer x positions with group names.
type groupTicks []string

func (g groupTicks) Ticks(min, max float64) []plot.Tick {
	var ts []plot.Tick
	for i, n := range g {
		ts = append(ts, plot.Tick{Value: float64(i), Label: n})
	}
	return ts
}

// barChart draws grouped bars: vals[s][g] is series s in group g (NaN or
// ≤ 0 on a log axis: no bar). Bars are rectangles from the axis base (0,
// or 1 on a log axis, where a log scale cannot start at 0) to the value.
func barChart(path, title, ylabel string, groups, series []string, vals [][]float64, logY bool) error {
	p := plot.New()
	p.Title.Text = title
	p.Y.Label.Text = ylabel
	p.X.Tick.Marker = groupTicks(groups)
	p.Add(plotter.NewGrid())
	base := 0.0
	lo, hi := math.Inf(1), math.Inf(-1)
	if logY {
		base = 1
		p.Y.Scale = plot.LogScale{}
		p.Y.Tick.Marker = plot.LogTicks{Prec: -1}
	}
	w := 0.8 / float64(len(series))
	for s, name := range series {
		c := plotutil.Color(s)
		var first *plotter.Polygon
		for g := range groups {
			v := vals[s][g]
			if math.IsNaN(v) || (logY && v <= base) {
				continue
			}
			x0 := float64(g) - 0.4 + float64(s)*w
			poly, err := plotter.NewPolygon(plotter.XYs{{X: x0, Y: base}, {X: x0 + w, Y: base}, {X: x0 + w, Y: v}, {X: x0, Y: v}})
			if err != nil {
				return fmt.Errorf("bench: plot: %w", err)
			}
			poly.Color = c
			poly.LineStyle.Width = vg.Points(0.5)
			p.Add(poly)
			if first == nil {
				first = poly
			}
			lo, hi = math.Min(lo, v), math.Max(hi, v)
		}
		if first != nil {
			p.Legend.Add(name, first)
		}
	}
	if math.IsInf(hi, -1) {
		return nil
	}
	p.X.Min, p.X.Max = -0.6, float64(len(groups))-0.4
	if logY {
		p.Y.Min, p.Y.Max = math.Max(1, lo/3), hi*3
	} else {
		p.Y.Min, p.Y.Max = 0, hi*1.35 // room for the legend
	}
	p.Legend.Top = true
	if err := p.Save(9*vg.Inch, 5*vg.Inch, path); err != nil {
		return fmt.Errorf("bench: plot: %w", err)
	}
	return nil
}

// writeLexicalPlots draws the lexical suite's bar charts into dir:
// lexical-qps.png (OR / AND / phrase queries per CPU second, log scale,
// one bar per engine) and lexical-ndcg.png (nDCG@10 per collection and
// stemming, like-for-like configurations). It returns the files written.
func writeLexicalPlots(dir string, r *lexical.Result, emulated bool) ([]string, error) {
	var files []string
	suffix := ""
	if emulated {
		suffix = "\n" + EmulatedLabel
	}
	if len(r.Speed) > 0 {
		groups := []string{"OR", "AND", "phrase"}
		var names []string
		var vals [][]float64
		for _, s := range r.Speed {
			names = append(names, s.Engine+" "+s.Version)
			vals = append(vals, []float64{s.OR.QPSCPU, s.AND.QPSCPU, s.Phrase.QPSCPU})
		}
		f := "lexical-qps.png"
		title := "Go source corpus, top-10, 1 thread: queries per CPU second" + suffix
		if r.Corpus != nil {
			title = fmt.Sprintf("Go source corpus (%d files), top-10, 1 thread: queries per CPU second%s", r.Corpus.Files, suffix)
		}
		if err := barChart(filepath.Join(dir, f), title, "queries per CPU second (log scale)", groups, names, vals, true); err != nil {
			return nil, err
		}
		files = append(files, f)
	}
	if len(r.Quality) > 0 {
		groups := []string{"cranfield unstemmed", "cranfield stemmed", "vaswani unstemmed", "vaswani stemmed"}
		// Like-for-like configurations: no stop-word removal anywhere.
		cfgs := map[string][2]string{
			"strata":           {"oracle", "stemmed (no stop-words)"},
			lexical.PeerXapian: {"none", "english"},
			lexical.PeerFTS5:   {"unicode61", "porter unicode61"},
			lexical.PeerBleve:  {"none", "english"},
		}
		engines := []string{"strata", lexical.PeerXapian, lexical.PeerFTS5, lexical.PeerBleve}
		vals := make([][]float64, len(engines))
		for e, eng := range engines {
			vals[e] = make([]float64, len(groups))
			for g := range groups {
				vals[e][g] = math.NaN()
				coll := []string{"cranfield", "vaswani"}[g/2]
				cfg := cfgs[eng][g%2]
				for _, q := range r.Quality {
					if q.Collection == coll && q.Engine == eng && q.Config == cfg {
						vals[e][g] = q.NDCG10
					}
				}
			}
		}
		f := "lexical-ndcg.png"
		if err := barChart(filepath.Join(dir, f), "nDCG@10 (binary gain), BM25 k1 1.2 b 0.75, OR, no stop-words", "nDCG@10", groups, engines, vals, false); err != nil {
			return nil, err
		}
		files = append(files, f)
	}
	return files, nil
}
