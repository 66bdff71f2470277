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
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
	"github.com/gantry-ml/gantry/internal/runtime/plugins/trainjobstatus"
)

// statusPod is a running pod of TrainJob ns/job as the TrainJobStatus plugin renders it.
func statusPod(job, name string, completionIndex string, started time.Time, env ...corev1.EnvVar) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: "ns", Name: name, UID: types.UID(name + "-uid"),
			Labels: map[string]string{"batch.kubernetes.io/job-completion-index": completionIndex, "jobset.sigs.k8s.io/job-index": "0"},
		},
		Spec: corev1.PodSpec{
			ServiceAccountName: "trainer-sa",
			Containers: []corev1.Container{
				{Name: "sidecar"},
				{
					Name: "node",
					Env: append([]corev1.EnvVar{
						{Name: trainjobstatus.EnvServerURL, Value: trainjobstatus.URL("gantry-svc", "gantry-system", 10443)("ns", job)},
						{Name: trainjobstatus.EnvCACert, Value: trainjobstatus.MountPath + "/" + trainjobstatus.CAKey},
						{Name: trainjobstatus.EnvToken, Value: trainjobstatus.MountPath + "/" + trainjobstatus.TokenFile},
					}, env...),
					VolumeMounts: []corev1.VolumeMount{{Name: trainjobstatus.VolumeName, MountPath: trainjobstatus.MountPath, ReadOnly: true}},
				},
			},
			Volumes: []corev1.Volume{{Name: trainjobstatus.VolumeName, VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{
				Sources: []corev1.VolumeProjection{
					{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{
						Audience: trainjobstatus.Audience("ns", job), ExpirationSeconds: ptr.To[int64](600), Path: trainjobstatus.TokenFile,
					}},
					{ConfigMap: &corev1.ConfigMapProjection{
						LocalObjectReference: corev1.LocalObjectReference{Name: trainjobstatus.CAConfigMapName},
						Items:                []corev1.KeyToPath{{Key: trainjobstatus.CAKey, Path: trainjobstatus.CAKey}},
					}},
				},
			}}}},
		},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, StartTime: ptr.To(metav1.NewTime(started))},
	}
}

func TestTargetOf(t *testing.T) {
	got, err := targetOf(statusPod("job", "job-node-0-0", "0", time.Now()))
	if err != nil {
		t.Fatal(err)
	}
	want := target{
		url:       "https://127.0.0.1:10443/apis/trainer.kubeflow.org/v1alpha1/namespaces/ns/trainjobs/job/status",
		namespace: "ns", pod: "job-node-0-0", podUID: "job-node-0-0-uid", serviceAccount: "trainer-sa",
		audience: "trainer.kubeflow.org/v1alpha1/namespaces/ns/trainjobs/job/status", expirationSeconds: 600,
		caConfigMap: trainjobstatus.CAConfigMapName, caKey: trainjobstatus.CAKey,
	}
	got.container = nil
	if diff := cmp.Diff(want, *got, cmp.AllowUnexported(target{})); diff != "" {
		t.Errorf("targetOf (-want +got):\n%s", diff)
	}

	noVolume := statusPod("job", "p", "0", time.Now())
	noVolume.Spec.Volumes = nil
	if _, err := targetOf(noVolume); err == nil || err.Error() != "the token: no projected volume is mounted at /var/run/secrets/kubeflow/trainer" {
		t.Errorf("a pod without the volume: %v", err)
	}
}

func TestLeaders(t *testing.T) {
	now := time.Now()
	optedOut := statusPod("c", "c-node-0-1", "1", now)
	optedOut.Annotations = map[string]string{AnnotationProgress: "false"}
	pending := statusPod("d", "d-node-0-0", "0", now)
	pending.Status.Phase = corev1.PodPending
	plain := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "no-env"}, Status: corev1.PodStatus{Phase: corev1.PodRunning}}
	pods := []*corev1.Pod{
		statusPod("a", "a-node-0-1", "1", now), statusPod("a", "a-node-0-0", "0", now), statusPod("b", "b-node-0-3", "3", now),
		statusPod("c", "c-node-0-0", "0", now), optedOut, pending, plain,
	}
	got := map[string]string{}
	for url, p := range leaders(pods) {
		got[url] = p.Name
	}
	u := trainjobstatus.URL("gantry-svc", "gantry-system", 10443)
	want := map[string]string{u("ns", "a"): "a-node-0-0", u("ns", "b"): "b-node-0-3"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("leaders (-want +got):\n%s", diff)
	}
}

// sent is one report as the test's post function saw it.
type sent struct {
	At      time.Duration
	Pod     string
	Percent int32
	ETA     int32
	Loss    string
}

// TestReporterRun drives a job through its run on a fake clock: a report a second from rank 0,
// the last one half a second before kwok ends the pod (none in the second before it) and not again
// when another rank is left, a 429 honoured, a pod of a restart starting the curve over.
func TestReporterRun(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clock := t0
	var mu sync.Mutex
	var got []sent
	codes := map[time.Duration]result{2 * time.Second: {code: http.StatusTooManyRequests, retryAfter: 2 * time.Second}}
	r := &reporter{
		sched: schedule{interval: time.Second, finalLead: 500 * time.Millisecond}, podDuration: 5 * time.Second,
		now: func() time.Time { return clock }, logf: t.Logf, jobs: map[string]*job{},
		post: func(_ context.Context, tg *target, st *trainer.TrainJobTrainerStatus) (result, error) {
			mu.Lock()
			defer mu.Unlock()
			at := clock.Sub(t0)
			got = append(got, sent{At: at, Pod: tg.pod, Percent: *st.ProgressPercentage, ETA: *st.EstimatedRemainingSeconds, Loss: st.Metrics[0].Value})
			if res, ok := codes[at]; ok {
				return res, nil
			}
			return result{code: http.StatusOK}, nil
		},
	}
	rank0 := statusPod("job", "job-node-0-0", "0", t0, corev1.EnvVar{Name: EnvLossRate, Value: "2"})
	rank1 := statusPod("job", "job-node-0-1", "1", t0)
	replaced := statusPod("job", "job-node-0-0-again", "0", t0.Add(5250*time.Millisecond), corev1.EnvVar{Name: EnvLossRate, Value: "2"})
	for step := time.Duration(0); step <= 8*time.Second; step += 250 * time.Millisecond {
		clock = t0.Add(step)
		var pods []*corev1.Pod
		switch {
		case step < 5*time.Second:
			pods = []*corev1.Pod{rank1, rank0}
		case step == 5*time.Second:
			// Rank 0 has ended, rank 1 a moment later: no second last report.
			pods = []*corev1.Pod{rank1}
		default:
			pods = []*corev1.Pod{replaced}
		}
		r.tick(context.Background(), pods)
		r.inflight.Wait()
	}
	want := []sent{
		{At: 0, Pod: "job-node-0-0", Percent: 0, ETA: 5, Loss: "2.6"},
		{At: time.Second, Pod: "job-node-0-0", Percent: 20, ETA: 4, Loss: "1.7758"},
		{At: 2 * time.Second, Pod: "job-node-0-0", Percent: 40, ETA: 3, Loss: "1.22332"}, // 429: wait 2 s
		{At: 4500 * time.Millisecond, Pod: "job-node-0-0", Percent: 100, ETA: 0, Loss: "0.438338"},
		{At: 5250 * time.Millisecond, Pod: "job-node-0-0-again", Percent: 0, ETA: 5, Loss: "2.6"},
		{At: 6250 * time.Millisecond, Pod: "job-node-0-0-again", Percent: 20, ETA: 4, Loss: "1.7758"},
		{At: 7250 * time.Millisecond, Pod: "job-node-0-0-again", Percent: 40, ETA: 3, Loss: "1.22332"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("reports (-want +got):\n%s", diff)
	}
}
