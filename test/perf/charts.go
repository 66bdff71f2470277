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

package main

import (
	"fmt"
	"path/filepath"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
)

// Chart files, in the output directory.
const (
	chartLatency  = "latency-cdf.png"
	chartCreated  = "jobsets-over-time.png"
	chartComplete = "status-path.png"
)

// series is one line of a chart.
type series struct {
	label    string
	xy       plotter.XYs
	baseline bool
}

// drawCharts writes the PNG charts and returns their file names.
func drawCharts(dir string, r *Report) ([]string, error) {
	var latency, created, complete []series
	for _, s := range r.Scenarios {
		base := s.Kind == kindBaseline
		label := s.Label()
		if base {
			label += " (request sent to JobSet seen)"
		}
		latency = append(latency, series{label: label, xy: cdf(s.Create.Latencies), baseline: base})
		created = append(created, series{label: s.Label(), xy: cumulative(s.Create.JobSetSeconds), baseline: base})
		if s.StatusPath != nil {
			complete = append(complete, series{label: s.Label(), xy: cumulative(s.StatusPath.CompleteSeconds)})
		}
	}
	charts := []struct {
		file, title, x, y string
		logX              bool
		lines             []series
	}{
		{chartLatency, fmt.Sprintf("TrainJob seen to JobSet seen, N=%d", r.Parameters.TrainJobs), "latency (ms, log scale)", "fraction of TrainJobs", true, latency},
		{chartCreated, fmt.Sprintf("JobSets created over time, N=%d", r.Parameters.TrainJobs), "seconds since the first create", "JobSets seen", false, created},
		{chartComplete, "Status path: TrainJobs Complete after their JobSets", "seconds since the first JobSet status write", "TrainJobs Complete", false, complete},
	}
	var files []string
	for _, c := range charts {
		if len(c.lines) == 0 {
			continue
		}
		if err := lineChart(filepath.Join(dir, c.file), c.title, c.x, c.y, c.logX, c.lines); err != nil {
			return nil, fmt.Errorf("%s: %w", c.file, err)
		}
		files = append(files, c.file)
	}
	return files, nil
}

func lineChart(path, title, xLabel, yLabel string, logX bool, lines []series) error {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = xLabel
	p.Y.Label.Text = yLabel
	// Top left is empty in both kinds of chart: lines start at the bottom left and rise.
	p.Legend.Top = true
	p.Legend.Left = true
	p.Add(plotter.NewGrid())
	if logX {
		p.X.Scale = plot.LogScale{}
		p.X.Tick.Marker = plot.LogTicks{Prec: -1}
	}
	for i, s := range lines {
		if len(s.xy) == 0 {
			continue
		}
		l, err := plotter.NewLine(s.xy)
		if err != nil {
			return err
		}
		l.Color = plotutil.Color(i)
		l.Width = vg.Points(1.5)
		if s.baseline {
			l.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
		}
		p.Add(l)
		p.Legend.Add(s.label, l)
	}
	p.Legend.ThumbnailWidth = vg.Points(24)
	p.Legend.TextStyle.Font.Size = vg.Points(9)
	p.Legend.Padding = vg.Points(2)
	return p.Save(24*vg.Centimeter, 15*vg.Centimeter, path)
}

// cdf turns sorted values into (value, fraction at or below it); the log axis needs values > 0.
func cdf(sorted []float64) plotter.XYs {
	xy := make(plotter.XYs, len(sorted))
	for i, v := range sorted {
		xy[i].X = max(v, 0.01)
		xy[i].Y = float64(i+1) / float64(len(sorted))
	}
	return xy
}

// cumulative turns sorted times into (time, how many by then), starting at (0, 0).
func cumulative(sorted []float64) plotter.XYs {
	xy := make(plotter.XYs, 0, len(sorted)+1)
	xy = append(xy, plotter.XY{})
	for i, t := range sorted {
		xy = append(xy, plotter.XY{X: t, Y: float64(i + 1)})
	}
	return xy
}
