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
	"context"
	"fmt"
	"io"
	"net/http"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// metrics is one scrape of the manager's Prometheus endpoint.
type metrics map[string]*dto.MetricFamily

func scrape(ctx context.Context, url string) (metrics, error) {
	return scrapeWith(ctx, http.DefaultClient, url, "")
}

// scrapeWith scrapes url with hc, sending token as a bearer token when it is set (a metrics
// endpoint behind authentication and authorisation, as a local cluster's manager serves it).
func scrapeWith(ctx context.Context, hc *http.Client, url, token string) (metrics, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, err
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("scraping %s: %s", url, resp.Status)
	}
	return parseMetrics(resp.Body)
}

func parseMetrics(r io.Reader) (metrics, error) {
	p := expfmt.NewTextParser(model.UTF8Validation)
	families, err := p.TextToMetricFamilies(r)
	if err != nil {
		return nil, fmt.Errorf("parsing metrics: %w", err)
	}
	return families, nil
}

// sum adds the counter or gauge values of the named metric whose labels include every pair of
// match.
func (m metrics) sum(name string, match map[string]string) float64 {
	total := 0.0
	m.each(name, match, func(labels map[string]string, v float64) { total += v })
	return total
}

// by sums the named metric per value of one label.
func (m metrics) by(name, label string, match map[string]string) map[string]float64 {
	out := map[string]float64{}
	m.each(name, match, func(labels map[string]string, v float64) { out[labels[label]] += v })
	return out
}

func (m metrics) each(name string, match map[string]string, f func(map[string]string, float64)) {
	fam, ok := m[name]
	if !ok {
		return
	}
	for _, metric := range fam.GetMetric() {
		labels := map[string]string{}
		for _, l := range metric.GetLabel() {
			labels[l.GetName()] = l.GetValue()
		}
		if !matches(labels, match) {
			continue
		}
		switch {
		case metric.Counter != nil:
			f(labels, metric.GetCounter().GetValue())
		case metric.Gauge != nil:
			f(labels, metric.GetGauge().GetValue())
		case metric.Untyped != nil:
			f(labels, metric.GetUntyped().GetValue())
		}
	}
}

func matches(labels, match map[string]string) bool {
	for k, v := range match {
		if labels[k] != v {
			return false
		}
	}
	return true
}

// writeMethods are the HTTP methods of API writes.
var writeMethods = []string{http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete}

// clientWrites is controller-runtime's rest_client_requests_total for the write methods, by method.
func (m metrics) clientWrites() map[string]float64 {
	all := m.by("rest_client_requests_total", "method", nil)
	out := map[string]float64{}
	for _, method := range writeMethods {
		out[method] = all[method]
	}
	return out
}

// delta subtracts before from after, method by method.
func delta(after, before map[string]float64) map[string]float64 {
	out := map[string]float64{}
	for k, v := range after {
		out[k] = v - before[k]
	}
	return out
}

// summaryOf returns the sample count and the quantiles of the first series of a summary metric.
func (m metrics) summaryOf(name string) (count float64, quantiles map[float64]float64) {
	quantiles = map[float64]float64{}
	fam, ok := m[name]
	if !ok || len(fam.GetMetric()) == 0 || fam.GetMetric()[0].GetSummary() == nil {
		return 0, quantiles
	}
	s := fam.GetMetric()[0].GetSummary()
	for _, q := range s.GetQuantile() {
		quantiles[q.GetQuantile()] = q.GetValue()
	}
	return float64(s.GetSampleCount()), quantiles
}
