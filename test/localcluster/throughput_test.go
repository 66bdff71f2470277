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

package localcluster

import (
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"
)

// flagValue is the value after flag in args ("" when absent).
func flagValue(args []string, flag string) string {
	if i := slices.Index(args, flag); i >= 0 && i+1 < len(args) {
		return args[i+1]
	}
	return ""
}

// TestThroughputTuningOnlyInAThroughputCluster holds the default cluster (the e2e and
// reliability suites') to the settings they rely on, and a throughput cluster (the scale run's)
// to its tuning, process by process; Gantry's own processes are never tuned.
func TestThroughputTuningOnlyInAThroughputCluster(t *testing.T) {
	type view struct {
		Env                                     map[string][]string
		DeleteWorkers                           string
		Controllers, ControllerQPS, GracePeriod string
		SchedulerConfig, SchedulerKubeconfig    bool
		KwokLease                               string
		KwokConfigs                             int
	}
	tuned := []string{"GOGC=400", "GOMEMLIMIT=4GiB"}
	cases := map[string]struct {
		throughput bool
		want       view
	}{
		"default": {want: view{
			Env: map[string][]string{}, Controllers: "*", ControllerQPS: "100",
			SchedulerKubeconfig: true, KwokLease: "40", KwokConfigs: 2,
		}},
		"throughput": {throughput: true, want: view{
			Env: map[string][]string{
				"etcd": tuned, "kube-apiserver": tuned, "kube-controller-manager": tuned,
				"kube-scheduler": tuned, "kwok": tuned, "jobset": tuned,
			},
			Controllers:   "*,-endpoints-controller,-endpointslice-controller,-endpointslice-mirroring-controller",
			ControllerQPS: "1000", GracePeriod: "5m", SchedulerConfig: true, KwokLease: "400", KwokConfigs: 3,
			DeleteWorkers: "8",
		}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			s := DefaultSettings()
			s.Throughput, s.Kueue, s.UI, s.Progress = tc.throughput, true, true, true
			c := &Cluster{Root: t.TempDir(), StateDir: t.TempDir(), Settings: s}
			got := view{Env: map[string][]string{}}
			for _, comp := range c.components() {
				for _, e := range comp.env {
					if strings.HasPrefix(e, "GOGC=") || strings.HasPrefix(e, "GOMEMLIMIT=") {
						got.Env[comp.name] = append(got.Env[comp.name], e)
					}
				}
				switch comp.name {
				case "kube-apiserver":
					got.DeleteWorkers = flagValue(comp.args, "--delete-collection-workers")
				case "kube-controller-manager":
					got.Controllers, got.ControllerQPS = flagValue(comp.args, "--controllers"), flagValue(comp.args, "--kube-api-qps")
					got.GracePeriod = flagValue(comp.args, "--node-monitor-grace-period")
				case "kube-scheduler":
					got.SchedulerConfig, got.SchedulerKubeconfig = slices.Contains(comp.args, "--config"), slices.Contains(comp.args, "--kubeconfig")
				case "kwok":
					got.KwokLease = flagValue(comp.args, "--node-lease-duration-seconds")
					for _, a := range comp.args {
						if a == "--config" {
							got.KwokConfigs++
						}
					}
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("components (-want,+got):\n%s", diff)
			}
		})
	}
}

// TestKwokThroughputConfigKeepsPodLogs: kwok reads a KwokConfiguration document without its API
// defaults, so an option left out is off. Leaving out enableDebuggingHandlers once stopped kwok
// serving pod logs (`gantry logs`, `kubectl logs`) in a tuned cluster.
func TestKwokThroughputConfigKeepsPodLogs(t *testing.T) {
	c := &Cluster{Root: t.TempDir(), StateDir: t.TempDir(), Settings: DefaultSettings()}
	c.Settings.Throughput = true
	if err := os.MkdirAll(c.path("config"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := c.writeKwokConfig(); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(c.path("config", kwokThroughputConfigFile))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		APIVersion string         `json:"apiVersion"`
		Kind       string         `json:"kind"`
		Options    map[string]any `json:"options"`
	}
	if err := yaml.UnmarshalStrict(data, &doc); err != nil {
		t.Fatal(err)
	}
	// kwok v0.8.0's defaults (SetObjectDefaults_KwokConfiguration) for every option set here,
	// but the pod Stage pool.
	want := map[string]any{
		"enableDebuggingHandlers": true, "enableProfilingHandler": true, "enablePodsOnNodeSyncListPager": true,
		"podsOnNodeSyncParallelism": float64(1), "podPlayStageParallelism": float64(32),
		"nodePlayStageParallelism": float64(4), "nodeLeaseParallelism": float64(4),
	}
	if diff := cmp.Diff("config.kwok.x-k8s.io/v1alpha1 KwokConfiguration", doc.APIVersion+" "+doc.Kind); diff != "" {
		t.Error(diff)
	}
	if diff := cmp.Diff(want, doc.Options); diff != "" {
		t.Errorf("options (-want,+got):\n%s", diff)
	}
}
