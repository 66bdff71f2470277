/*
Copyright 2026 The Gantry Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package ui

import (
	"math"
	"slices"
	"strconv"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
	"github.com/gantry-ml/gantry/internal/optimization"
)

// A scatter of one parameter against the objective, computed here and drawn by the template as
// inline SVG: the page needs no script for it, and SVG attributes are not the inline styles the
// CSP refuses. The x axis spans the parameter's search space (a log scale for logUniform, one
// slot per choice for categorical), so where the trials fell in the space shows; the y axis
// spans the objective values reported.

// The chart's size in SVG units and its padding for the axes' labels.
const (
	scatterW   = 480
	scatterH   = 200
	scatterPad = 44
)

// scatter is one parameter's chart.
type scatter struct {
	Parameter, Metric string
	W, H              int
	Axes              [2]line
	Points            []point
	Labels            []label
}

type line struct{ X1, Y1, X2, Y2 float64 }

// point is a trial that reported the objective; Title is its tooltip and accessible text.
type point struct {
	X, Y  float64
	Best  bool
	Title string
}

type label struct {
	X, Y   float64
	Anchor string
	Text   string
}

// scatters is a chart per parameter, of the trials that reported the objective; none when no
// trial did.
func scatters(oj *trainer.OptimizationJob, trials []optimization.Trial) []scatter {
	var reported []optimization.Trial
	for _, t := range trials {
		if t.Objective != nil {
			reported = append(reported, t)
		}
	}
	if len(reported) == 0 {
		return nil
	}
	lo, hi := objectiveRange(reported)
	metric := optimization.ObjectiveMetric(oj)
	var out []scatter
	for _, p := range oj.Spec.Parameters {
		out = append(out, newScatter(p, metric, reported, lo, hi))
	}
	return out
}

func objectiveRange(trials []optimization.Trial) (lo, hi float64) {
	lo, hi = math.Inf(1), math.Inf(-1)
	for _, t := range trials {
		lo, hi = min(lo, *t.Objective), max(hi, *t.Objective)
	}
	if lo == hi {
		// One value (or all equal): centre it rather than divide by zero.
		d := math.Abs(lo) * 0.1
		if d == 0 {
			d = 1
		}
		lo, hi = lo-d, hi+d
	}
	return lo, hi
}

func newScatter(p trainer.Parameter, metric string, trials []optimization.Trial, lo, hi float64) scatter {
	const w, h, pad = scatterW, scatterH, scatterPad
	sc := scatter{Parameter: p.Name, Metric: metric, W: w, H: h,
		Axes: [2]line{{pad, h - pad, w - pad, h - pad}, {pad, pad, pad, h - pad}}}
	y := func(v float64) float64 { return round1(h - pad - (v-lo)/(hi-lo)*(h-2*pad)) }
	x, xLabels := xAxis(p.SearchSpace)
	for _, t := range trials {
		value := valueOf(t, p.Name)
		px, ok := x(value)
		if !ok {
			continue // a value outside the space (or none): nothing true to plot
		}
		sc.Points = append(sc.Points, point{X: round1(px), Y: y(*t.Objective), Best: t.Best,
			Title: t.TrainJob.Name + ": " + p.Name + "=" + value + ", " + metric + "=" + optimization.FormatValue(*t.Objective)})
	}
	sc.Labels = append(sc.Labels,
		label{X: pad - 4, Y: pad + 4, Anchor: "end", Text: short(hi)},
		label{X: pad - 4, Y: h - pad + 4, Anchor: "end", Text: short(lo)})
	sc.Labels = append(sc.Labels, xLabels...)
	return sc
}

func valueOf(t optimization.Trial, name string) string {
	for _, a := range t.Parameters {
		if a.Name == name {
			return a.Value
		}
	}
	return ""
}

// xAxis maps a value to x, and labels the axis, for a search space.
func xAxis(s *trainer.SearchSpace) (func(string) (float64, bool), []label) {
	const w, h, pad = scatterW, scatterH, scatterPad
	below := float64(h - pad + 16)
	if s != nil && s.Categorical != nil {
		choices := s.Categorical.Choices
		slot := func(i int) float64 { return pad + (float64(i)+0.5)/float64(len(choices))*(w-2*pad) }
		var labels []label
		for i, c := range choices {
			// Past a dozen choices the names would overlap: the first and last say the order.
			if len(choices) <= 12 || i == 0 || i == len(choices)-1 {
				labels = append(labels, label{X: round1(slot(i)), Y: below, Anchor: "middle", Text: c})
			}
		}
		return func(v string) (float64, bool) {
			i := slices.Index(choices, v)
			return slot(i), i >= 0
		}, labels
	}
	minS, maxS, logScale := numericBounds(s)
	lo, hi, err := optimization.Bounds(minS, maxS)
	if err != nil || lo >= hi || (logScale && lo <= 0) {
		return func(string) (float64, bool) { return 0, false }, nil
	}
	scale := func(v float64) float64 { return v }
	if logScale {
		scale = math.Log10
	}
	labels := []label{{X: pad, Y: below, Anchor: "start", Text: minS}, {X: w - pad, Y: below, Anchor: "end", Text: maxS}}
	return func(v string) (float64, bool) {
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || f < lo || f > hi {
			return 0, false
		}
		return pad + (scale(f)-scale(lo))/(scale(hi)-scale(lo))*(w-2*pad), true
	}, labels
}

func numericBounds(s *trainer.SearchSpace) (minS, maxS string, logScale bool) {
	switch {
	case s == nil:
		return "", "", false
	case s.Uniform != nil:
		return s.Uniform.Min, s.Uniform.Max, false
	case s.LogUniform != nil:
		return s.LogUniform.Min, s.LogUniform.Max, true
	}
	return "", "", false
}

func round1(v float64) float64 { return math.Round(v*10) / 10 }

// short is an axis label: four significant digits.
func short(v float64) string { return strconv.FormatFloat(v, 'g', 4, 64) }
