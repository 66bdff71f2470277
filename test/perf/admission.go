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
	"math"
	"slices"
	"strings"

	"k8s.io/client-go/kubernetes"
)

// admissionMetric is the apiserver's histogram of each webhook call's duration, which target 3
// reads: what a TrainJob create waits for Gantry's webhooks.
const admissionMetric = "apiserver_admission_webhook_admission_duration_seconds"

// AdmissionLatency is one webhook's share of the creation phase, from the apiserver's histogram:
// its bucket counts after the phase minus before it.
type AdmissionLatency struct {
	Webhook string  `json:"webhook"`
	Type    string  `json:"type"`
	Calls   float64 `json:"calls"`
	// P50Ms and P99Ms interpolate linearly within the histogram's buckets (Prometheus's
	// histogram_quantile); the apiserver's smallest bucket is 5 ms, so below it they estimate.
	P50Ms float64 `json:"p50Millis"`
	P99Ms float64 `json:"p99Millis"`
	// ServedP50Ms and ServedP99Ms are the same calls as the manager's webhook server timed them
	// (controller_runtime_webhook_latency_seconds, decade buckets: an order of magnitude): the
	// rest of the apiserver's figure is the trip, TLS and waiting for a CPU.
	ServedP50Ms float64 `json:"servedP50Millis"`
	ServedP99Ms float64 `json:"servedP99Millis"`
}

// servedMetric is the manager's histogram of the time its webhook server took per request.
const servedMetric = "controller_runtime_webhook_latency_seconds"

// bucket is a cumulative histogram bucket.
type bucket struct{ le, count float64 }

// apiMetrics scrapes kube-apiserver's /metrics (open to administrators).
func (cp *controlPlane) apiMetrics(ctx context.Context) (metrics, error) {
	cs, err := kubernetes.NewForConfig(cp.config)
	if err != nil {
		return nil, err
	}
	data, err := cs.CoreV1().RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
	if err != nil {
		return nil, fmt.Errorf("scraping kube-apiserver: %w", err)
	}
	return parseMetrics(strings.NewReader(string(data)))
}

// admissionLatencies are the TrainJob webhooks' CREATE calls between two scrapes, per webhook,
// from the apiserver's metrics and from the manager's (served*; nil when not scraped).
func admissionLatencies(before, after, servedBefore, servedAfter metrics) []AdmissionLatency {
	var out []AdmissionLatency
	served := bucketDelta(histograms(servedBefore, servedMetric, servedWebhook), histograms(servedAfter, servedMetric, servedWebhook))
	for key, buckets := range bucketDelta(histograms(before, admissionMetric, apiserverWebhook), histograms(after, admissionMetric, apiserverWebhook)) {
		calls := buckets[len(buckets)-1].count
		if calls == 0 {
			continue
		}
		a := AdmissionLatency{Webhook: key[0], Type: key[1], Calls: calls,
			P50Ms: 1000 * quantile(0.5, buckets), P99Ms: 1000 * quantile(0.99, buckets)}
		if s, ok := served[[2]string{"", key[1]}]; ok {
			a.ServedP50Ms, a.ServedP99Ms = 1000*quantile(0.5, s), 1000*quantile(0.99, s)
		}
		out = append(out, a)
	}
	slices.SortFunc(out, func(a, b AdmissionLatency) int { return strings.Compare(a.Webhook+a.Type, b.Webhook+b.Type) })
	return out
}

// bucketDelta is after's buckets less before's, per key.
func bucketDelta(before, after map[[2]string][]bucket) map[[2]string][]bucket {
	for key, buckets := range after {
		if prev, ok := before[key]; ok && len(prev) == len(buckets) {
			for i := range buckets {
				buckets[i].count -= prev[i].count
			}
		}
	}
	return after
}

// apiserverWebhook keys the apiserver's CREATE calls of the TrainJob webhooks by name and type
// (admit, validating).
func apiserverWebhook(labels map[string]string) ([2]string, bool) {
	if labels["operation"] != "CREATE" || !strings.Contains(labels["name"], ".trainjob.") {
		return [2]string{}, false
	}
	return [2]string{labels["name"], labels["type"]}, true
}

// servedWebhook keys the manager's TrainJob webhook paths by the apiserver's type for them.
func servedWebhook(labels map[string]string) ([2]string, bool) {
	path := labels["webhook"]
	switch {
	case !strings.HasSuffix(path, "-trainjob"):
		return [2]string{}, false
	case strings.HasPrefix(path, "/mutate-"):
		return [2]string{"", "admit"}, true
	case strings.HasPrefix(path, "/validate-"):
		return [2]string{"", "validating"}, true
	}
	return [2]string{}, false
}

// histograms are the series of a histogram that key picks, summed per key, their buckets in
// order and ending with +Inf.
func histograms(m metrics, name string, key func(map[string]string) ([2]string, bool)) map[[2]string][]bucket {
	out := map[[2]string][]bucket{}
	fam, ok := m[name]
	if !ok {
		return out
	}
	for _, metric := range fam.GetMetric() {
		labels := map[string]string{}
		for _, l := range metric.GetLabel() {
			labels[l.GetName()] = l.GetValue()
		}
		h := metric.GetHistogram()
		k, ok := key(labels)
		if h == nil || !ok {
			continue
		}
		bs := out[k]
		if bs == nil {
			for _, b := range h.GetBucket() {
				bs = append(bs, bucket{le: b.GetUpperBound()})
			}
			bs = append(bs, bucket{le: math.Inf(1)})
		}
		// Rejected and allowed calls are separate series; both count.
		for i, b := range h.GetBucket() {
			bs[i].count += float64(b.GetCumulativeCount())
		}
		bs[len(bs)-1].count += float64(h.GetSampleCount())
		out[k] = bs
	}
	return out
}

// quantile is Prometheus's histogram_quantile: linear within the bucket holding the rank, the
// lower bound of the first bucket being 0; a rank in +Inf answers the highest finite bound.
func quantile(q float64, buckets []bucket) float64 {
	total := buckets[len(buckets)-1].count
	if total == 0 {
		return math.NaN()
	}
	rank := q * total
	lower, below := 0.0, 0.0
	for _, b := range buckets {
		if b.count >= rank {
			if math.IsInf(b.le, 1) {
				return lower
			}
			if b.count == below {
				return b.le
			}
			return lower + (b.le-lower)*(rank-below)/(b.count-below)
		}
		lower, below = b.le, b.count
	}
	return lower
}
