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
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"text/template"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"
)

// stage is the part of a kwok Stage the tests look at.
type stage struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Metadata   struct {
		Name string `json:"name"`
	} `json:"metadata"`
	Spec struct {
		ResourceRef struct {
			Kind string `json:"kind"`
		} `json:"resourceRef"`
		Delay *struct {
			DurationMilliseconds       *int64 `json:"durationMilliseconds"`
			JitterDurationMilliseconds *int64 `json:"jitterDurationMilliseconds"`
		} `json:"delay"`
		Steps []struct {
			Patch *struct {
				Subresource string `json:"subresource"`
				Root        string `json:"root"`
				Template    string `json:"template"`
			} `json:"patch"`
			Delete bool `json:"delete"`
		} `json:"steps"`
	} `json:"spec"`
}

func parseStages(t *testing.T, d time.Duration) map[string]stage {
	t.Helper()
	return parseStageDocs(t, KwokStages(d))
}

func parseStageDocs(t *testing.T, docs string) map[string]stage {
	t.Helper()
	out := map[string]stage{}
	for doc := range strings.SplitSeq(docs, "\n---\n") {
		var s stage
		if err := yaml.Unmarshal([]byte(doc), &s); err != nil {
			t.Fatalf("stage document does not parse: %v\n%s", err, doc)
		}
		if s.APIVersion != "kwok.x-k8s.io/v1alpha1" || s.Kind != "Stage" {
			t.Fatalf("document is %s %s, want kwok.x-k8s.io/v1alpha1 Stage", s.APIVersion, s.Kind)
		}
		out[s.Metadata.Name] = s
	}
	return out
}

// kwokFuncs stand in for the template functions kwok provides (sprig's, plus its own), with the
// same signatures.
var kwokFuncs = template.FuncMap{
	"Now": func() string { return "2026-01-02T03:04:05Z" },
	"Quote": func(v any) string {
		b, _ := json.Marshal(v)
		if len(b) > 0 && b[0] == '"' {
			return string(b)
		}
		return fmt.Sprintf("%q", string(b))
	},
	"Version":    func() string { return "v0.8.0" },
	"NodeIPWith": func(string) string { return "196.168.0.1" },
	"PodIPWith":  func(string, bool, string, string, string) (string, error) { return "10.244.1.7", nil },
}

// render executes a stage's patch template against obj, as kwok does, and decodes the YAML it
// produces strictly into out: a misspelled or misplaced field fails.
func render(t *testing.T, tpl string, obj any, out any) {
	t.Helper()
	data, err := json.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	var generic map[string]any
	if err := json.Unmarshal(data, &generic); err != nil {
		t.Fatal(err)
	}
	tmpl, err := template.New("patch").Funcs(kwokFuncs).Option("missingkey=zero").Parse(tpl)
	if err != nil {
		t.Fatalf("template does not parse: %v", err)
	}
	var buf bytes.Buffer
	if err := tmpl.Execute(&buf, generic); err != nil {
		t.Fatalf("template does not render: %v", err)
	}
	if err := yaml.UnmarshalStrict(buf.Bytes(), out); err != nil {
		t.Fatalf("rendered patch is not a valid status: %v\n%s", err, buf.String())
	}
}

func metaWith(name string, annotations map[string]string) metav1.ObjectMeta {
	return metav1.ObjectMeta{Name: name, Namespace: "default", UID: "uid-1", Annotations: annotations}
}

func samplePod(annotations map[string]string, init ...corev1.Container) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metaWith("trainer-node-0-0", annotations),
		Spec: corev1.PodSpec{
			NodeName:       "gpu-node-1",
			RestartPolicy:  corev1.RestartPolicyNever,
			InitContainers: init,
			Containers:     []corev1.Container{{Name: "node", Image: "pytorch"}, {Name: "sidecar-logger", Image: "busybox"}},
		},
		Status: corev1.PodStatus{Phase: corev1.PodRunning},
	}
}

func TestPodStagesRenderStatuses(t *testing.T) {
	stages := parseStages(t, 7*time.Second)
	always := corev1.ContainerRestartPolicyAlways
	type result struct {
		Phase      corev1.PodPhase
		Conditions map[corev1.PodConditionType]corev1.ConditionStatus
		Containers map[string]string
		Init       map[string]string
	}
	summarize := func(s *corev1.PodStatus) result {
		r := result{Phase: s.Phase, Conditions: map[corev1.PodConditionType]corev1.ConditionStatus{}, Containers: map[string]string{}, Init: map[string]string{}}
		for _, c := range s.Conditions {
			r.Conditions[c.Type] = c.Status
		}
		state := func(cs corev1.ContainerStatus) string {
			switch {
			case cs.State.Running != nil:
				return "running"
			case cs.State.Terminated != nil:
				return fmt.Sprintf("terminated %d %s", cs.State.Terminated.ExitCode, cs.State.Terminated.Reason)
			case cs.State.Waiting != nil:
				return "waiting " + cs.State.Waiting.Reason
			}
			return ""
		}
		for _, cs := range s.ContainerStatuses {
			r.Containers[cs.Name] = state(cs)
		}
		for _, cs := range s.InitContainerStatuses {
			r.Init[cs.Name] = state(cs)
		}
		return r
	}
	cases := []struct {
		stage string
		pod   *corev1.Pod
		want  result
	}{{
		stage: "gantry-pod-bound",
		pod:   samplePod(nil),
		want: result{Phase: corev1.PodPending,
			Conditions: map[corev1.PodConditionType]corev1.ConditionStatus{"PodReadyToStartContainers": "True", "Initialized": "True", "Ready": "False", "ContainersReady": "False"},
			Containers: map[string]string{"node": "waiting ContainerCreating", "sidecar-logger": "waiting ContainerCreating"},
			Init:       map[string]string{}},
	}, {
		stage: "gantry-pod-bound",
		pod:   samplePod(nil, corev1.Container{Name: "wait", Image: "busybox"}),
		want: result{Phase: corev1.PodPending,
			Conditions: map[corev1.PodConditionType]corev1.ConditionStatus{"PodReadyToStartContainers": "True", "Initialized": "False", "Ready": "False", "ContainersReady": "False"},
			Containers: map[string]string{"node": "waiting PodInitializing", "sidecar-logger": "waiting PodInitializing"},
			Init:       map[string]string{"wait": "waiting PodInitializing"}},
	}, {
		stage: "gantry-pod-initialized",
		pod:   samplePod(nil, corev1.Container{Name: "wait", Image: "busybox"}, corev1.Container{Name: "proxy", Image: "envoy", RestartPolicy: &always}),
		want: result{Conditions: map[corev1.PodConditionType]corev1.ConditionStatus{"Initialized": "True"},
			Containers: map[string]string{}, Init: map[string]string{"wait": "terminated 0 Completed", "proxy": "running"}},
	}, {
		stage: "gantry-pod-start",
		pod:   samplePod(nil),
		want: result{Phase: corev1.PodRunning,
			Conditions: map[corev1.PodConditionType]corev1.ConditionStatus{"Ready": "True", "ContainersReady": "True"},
			Containers: map[string]string{"node": "running", "sidecar-logger": "running"}, Init: map[string]string{}},
	}, {
		stage: "gantry-pod-succeed",
		pod:   samplePod(nil),
		want: result{Phase: corev1.PodSucceeded,
			Conditions: map[corev1.PodConditionType]corev1.ConditionStatus{"Ready": "False", "ContainersReady": "False"},
			Containers: map[string]string{"node": "terminated 0 Completed", "sidecar-logger": "terminated 0 Completed"}, Init: map[string]string{}},
	}, {
		stage: "gantry-pod-fail",
		pod:   samplePod(map[string]string{"sim.gantry.dev/exit-code": "42"}),
		want: result{Phase: corev1.PodFailed,
			Conditions: map[corev1.PodConditionType]corev1.ConditionStatus{"Ready": "False", "ContainersReady": "False"},
			Containers: map[string]string{"node": "terminated 42 Error", "sidecar-logger": "terminated 42 Error"}, Init: map[string]string{}},
	}, {
		stage: "gantry-pod-terminate",
		pod:   samplePod(nil),
		want: result{Phase: corev1.PodFailed,
			Conditions: map[corev1.PodConditionType]corev1.ConditionStatus{"Ready": "False", "ContainersReady": "False"},
			Containers: map[string]string{"node": "terminated 143 Error", "sidecar-logger": "terminated 143 Error"}, Init: map[string]string{}},
	}}
	for _, tc := range cases {
		t.Run(tc.stage+"/"+fmt.Sprint(len(tc.pod.Spec.InitContainers)), func(t *testing.T) {
			s, ok := stages[tc.stage]
			if !ok {
				t.Fatalf("no stage %s", tc.stage)
			}
			var status corev1.PodStatus
			patch := lastPatch(t, s)
			render(t, patch, tc.pod, &status)
			if diff := cmp.Diff(tc.want, summarize(&status)); diff != "" {
				t.Errorf("status (-want,+got):\n%s", diff)
			}
		})
	}
}

func lastPatch(t *testing.T, s stage) string {
	t.Helper()
	for _, v := range slices.Backward(s.Spec.Steps) {
		if p := v.Patch; p != nil {
			if p.Subresource != "status" || p.Root != "status" {
				t.Fatalf("stage %s patches %s/%s, want the status subresource", s.Metadata.Name, p.Subresource, p.Root)
			}
			return p.Template
		}
	}
	t.Fatalf("stage %s has no patch", s.Metadata.Name)
	return ""
}

func TestNodeStagesRenderStatuses(t *testing.T) {
	stages := parseStages(t, time.Second)
	node := &corev1.Node{ObjectMeta: metaWith("gpu-node-0", nil), Status: corev1.NodeStatus{
		Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady", Message: "ready"}},
	}}
	for _, name := range []string{"gantry-node-initialize", "gantry-node-heartbeat"} {
		var status corev1.NodeStatus
		render(t, lastPatch(t, stages[name]), node, &status)
		ready := ""
		for _, c := range status.Conditions {
			if c.Type == corev1.NodeReady {
				ready = string(c.Status)
			}
		}
		if ready != "True" {
			t.Errorf("%s: Ready is %q, want True; status %+v", name, ready, status)
		}
	}
}

func TestKwokStagesDurations(t *testing.T) {
	pod := map[string]int64{
		"gantry-pod-initialized": 1000, "gantry-pod-start": 500,
		"gantry-pod-succeed": 7000, "gantry-pod-fail": 7000, "gantry-pod-terminate": 200,
	}
	cases := map[string]struct {
		throughput   bool
		beat, jitter int64
	}{
		"default: conditions every 60 to 70 s":    {beat: 60000, jitter: 70000},
		"throughput: conditions every 5 to 6 min": {throughput: true, beat: 300000, jitter: 360000},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			doc := kwokStagesFor(7*time.Second, tc.throughput)
			if strings.Contains(doc, "__") {
				t.Errorf("a placeholder is left in the stages:\n%s", doc)
			}
			got, jitter := map[string]int64{}, map[string]int64{}
			for name, s := range parseStageDocs(t, doc) {
				if s.Spec.Delay != nil && s.Spec.Delay.DurationMilliseconds != nil {
					got[name] = *s.Spec.Delay.DurationMilliseconds
				}
				if s.Spec.Delay != nil && s.Spec.Delay.JitterDurationMilliseconds != nil && name == "gantry-node-heartbeat" {
					jitter[name] = *s.Spec.Delay.JitterDurationMilliseconds
				}
			}
			want := maps.Clone(pod)
			want["gantry-node-heartbeat"] = tc.beat
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("delays (-want,+got):\n%s", diff)
			}
			if diff := cmp.Diff(map[string]int64{"gantry-node-heartbeat": tc.jitter}, jitter); diff != "" {
				t.Errorf("heartbeat jitter (-want,+got):\n%s", diff)
			}
		})
	}
}
