package bench

import (
	"fmt"
	"image/color"
	"math"
	"path/filepath"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
)

// writePlots draws one recall@10-vs-QPS figure per data set, in the
// ann-benchmarks style (recall on x, QPS on a log y axis, one line per
// engine), and returns the file names written. QPS is per CPU second of
// the engine's process: on an idle machine it equals the single-thread
// wall QPS, and on a shared one it is not inflated by other jobs' load
// (results.json and report.md carry the wall figures too).
func writePlots(dir string, res *Results) ([]string, error) {
	var files []string
	for di, ds := range res.Datasets {
		p := plot.New()
		sub := ""
		switch {
		case ds.Subset != "" && res.Quick:
			sub = ", quick subset"
		case ds.NQ < ds.FullNQ:
			sub = fmt.Sprintf(", first %d of %d queries", ds.NQ, ds.FullNQ)
		}
		p.Title.Text = fmt.Sprintf("%s (n=%d, nq=%d, d=%d, %s%s), k=10, 1 thread", ds.Name, ds.N, ds.NQ, ds.D, ds.Metric, sub)
		if res.Emulated {
			p.Title.Text += "\n" + EmulatedLabel
		}
		p.X.Label.Text = "recall@10"
		p.Y.Label.Text = "queries per CPU second (log scale)"
		p.Y.Scale = plot.LogScale{}
		p.Y.Tick.Marker = plot.LogTicks{Prec: -1}
		p.Legend.Top = false
		p.Legend.Left = true
		p.Add(plotter.NewGrid())
		lo, hi := math.Inf(1), math.Inf(-1)
		i := 0
		for _, r := range res.ANN {
			if r.Dataset != ds.Name || len(r.Points) == 0 {
				continue
			}
			pts := make(plotter.XYs, len(r.Points))
			for j, pt := range r.Points {
				q := math.Max(pt.QPSCPU, 1)
				pts[j] = plotter.XY{X: pt.Recall, Y: q}
				lo, hi = math.Min(lo, q), math.Max(hi, q)
			}
			l, s, err := plotter.NewLinePoints(pts)
			if err != nil {
				return nil, fmt.Errorf("bench: plot: %w", err)
			}
			c := plotutil.Color(i)
			l.Color, s.Color = c, c
			l.Width = vg.Points(1.5)
			s.Shape = plotutil.Shape(i)
			s.Radius = vg.Points(3)
			if r.Engine == EngineStrata {
				l.Width = vg.Points(2.5)
				l.Color, s.Color = color.RGBA{R: 200, A: 255}, color.RGBA{R: 200, A: 255}
			} else if !r.Peer { // the Strata IVF-PQ engines: heavy, solid
				l.Width = vg.Points(2.5)
			} else {
				l.Dashes = plotutil.Dashes(i)
			}
			p.Add(l, s)
			p.Legend.Add(r.Engine, l, s)
			i++
		}
		if i == 0 {
			continue
		}
		p.Y.Min, p.Y.Max = lo/1.5, hi*1.5
		p.X.Max = 1.0
		p.X.Tick.Marker = recallTicks{}
		p.Legend.ThumbnailWidth = vg.Points(30)
		name := fmt.Sprintf("recall-qps-%02d-%s.png", di, sanitize(ds.Name))
		if err := p.Save(9*vg.Inch, 6*vg.Inch, filepath.Join(dir, name)); err != nil {
			return nil, fmt.Errorf("bench: plot: %w", err)
		}
		files = append(files, name)
	}
	return files, nil
}

func sanitize(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '.' {
			return r
		}
		return '_'
	}, s)
}

// recallTicks labels the recall axis every 0.01, 0.02, 0.05 or 0.1 so that
// about 5–10 labels show.
type recallTicks struct{}

func (recallTicks) Ticks(lo, hi float64) []plot.Tick {
	step := 0.1
	for _, s := range []float64{0.01, 0.02, 0.05, 0.1} {
		if (hi-lo)/s <= 10 {
			step = s
			break
		}
	}
	var ts []plot.Tick
	for i := math.Ceil(lo/step - 1e-9); i*step <= hi+1e-9; i++ {
		v := i * step
		ts = append(ts, plot.Tick{Value: v, Label: fmt.Sprintf("%.2f", v)})
		for j := 1; j < 5; j++ {
			if m := v + float64(j)*step/5; m <= hi {
				ts = append(ts, plot.Tick{Value: m})
			}
		}
	}
	return ts
}
