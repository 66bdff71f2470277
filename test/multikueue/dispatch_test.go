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

package multikueue

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"time"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
	authenticationv1 "k8s.io/api/authentication/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	jobsetv1alpha2 "sigs.k8s.io/jobset/api/jobset/v1alpha2"
	jobsetconstants "sigs.k8s.io/jobset/pkg/constants"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
	"github.com/gantry-ml/gantry/internal/runtime/plugins/trainjobstatus"
	"github.com/gantry-ml/gantry/internal/trainjob"
)

var _ = ginkgo.Describe("MultiKueue dispatch", func() {
	ginkgo.It("runs a TrainJob queued on the manager on one worker, and mirrors its conditions, jobsStatus and progress back", ginkgo.Label("quick"), func() {
		ns := newNamespace("dispatch")
		gpuQueues(ns)
		tj := trainJob(ns, "llm", 2, 8, "25s")
		gomega.Expect(manager.Create(ctx, tj)).To(gomega.Succeed())
		key := client.ObjectKeyFromObject(tj)
		gomega.Expect(ptr.Deref(tj.Spec.ManagedBy, "")).To(gomega.Equal(trainer.ManagedByMultiKueue),
			"Kueue's webhook on the manager hands a TrainJob of a MultiKueue ClusterQueue to MultiKueue")

		w, wl := expectDispatched(key)
		expectRunningOn(w, key, 2)
		remote := copyOn(gomega.Default, w, key)
		gomega.Expect(trainjob.PrebuiltWorkload(remote)).To(gomega.Equal(wl.GetName()), "the worker's copy names the Workload made for it")
		gomega.Expect(trainjob.MultiKueueWorkerCopy(remote)).To(gomega.BeTrue(), "the worker's copy carries MultiKueue's origin label")
		// Kueue copies it without managedBy; the worker's schema defaults it to the controller
		// Gantry stands in for.
		gomega.Expect(trainjob.ManagedByGantry(remote)).To(gomega.BeTrue(), "the worker's copy is its Gantry's to run, managedBy %v", remote.Spec.ManagedBy)
		gomega.Expect(remote.Spec.RuntimePatches).To(gomega.ContainElement(gomega.HaveField("Manager", simManager)))
		expectNothingOn(otherWorker(w), key)
		expectGantrySeesAcross(w, key)

		// Gantry on the manager builds nothing for it: whatever its status says came from the worker.
		jobSets := &jobsetv1alpha2.JobSetList{}
		gomega.Expect(manager.List(ctx, jobSets, client.InNamespace(ns))).To(gomega.Succeed())
		gomega.Expect(jobSets.Items).To(gomega.BeEmpty(), "JobSets on the manager")
		running := &trainer.TrainJob{}
		gomega.Expect(manager.Get(ctx, key, running)).To(gomega.Succeed())
		resumed := meta.FindStatusCondition(running.Status.Conditions, trainer.TrainJobSuspended)
		gomega.Expect(resumed).NotTo(gomega.BeNil(), "the worker Gantry's Suspended condition on the manager")
		gomega.Expect(resumed.Reason).To(gomega.Equal(trainer.TrainJobResumedReason))

		reportProgress(w, key, 42)
		gomega.Eventually(func(g gomega.Gomega) {
			there, here := copyOn(g, w, key), &trainer.TrainJob{}
			g.Expect(there).NotTo(gomega.BeNil())
			g.Expect(manager.Get(ctx, key, here)).To(gomega.Succeed())
			g.Expect(there.Status.TrainerStatus).NotTo(gomega.BeNil(), "the worker's status.trainerStatus")
			g.Expect(here.Status.TrainerStatus).NotTo(gomega.BeNil(), "the manager's status.trainerStatus")
			want, got := there.Status.TrainerStatus, here.Status.TrainerStatus
			g.Expect(got.ProgressPercentage).To(gomega.HaveValue(gomega.BeEquivalentTo(42)))
			g.Expect(got.EstimatedRemainingSeconds).To(gomega.Equal(want.EstimatedRemainingSeconds))
			g.Expect(got.Metrics).To(gomega.Equal(want.Metrics))
			g.Expect(got.LastUpdatedTime.Equal(&want.LastUpdatedTime)).To(gomega.BeTrue(), "lastUpdatedTime %s, the worker's %s", got.LastUpdatedTime, want.LastUpdatedTime)
		}).Should(gomega.Succeed())

		done := expectManagerCondition(key, trainer.TrainJobComplete)
		gomega.Expect(done.Reason).To(gomega.Equal(jobsetconstants.AllJobsCompletedReason))
		// Kueue deletes its copy, and the pods with it, once the outcome is on the manager.
		expectNothingOn(w, key)
		gomega.Eventually(func(g gomega.Gomega) {
			tj := &trainer.TrainJob{}
			g.Expect(manager.Get(ctx, key, tj)).To(gomega.Succeed())
			g.Expect(condition(workloadOf(g, manager, tj), "Finished")).To(gomega.HaveKeyWithValue("status", "True"))
		}).Should(gomega.Succeed())
	})

	ginkgo.It("drops the status fields Kueue's TrainJob type lacks (disabledFeatures) on the way back", func() {
		ns := newNamespace("gantry-status")
		gpuQueues(ns)
		// A Volcano runtime where Volcano is not installed: Gantry runs the job without a gang and
		// says so in status.disabledFeatures, a field of Gantry's own.
		for _, m := range append([]*member{manager}, workers...) {
			gomega.Expect(m.Create(ctx, volcanoRuntime(ns))).To(gomega.Succeed(), "the runtime on %s", m.name)
		}
		tj := trainJob(ns, "gang", 1, 8, "20s")
		tj.Spec.RuntimeRef = trainer.RuntimeRef{Name: "volcano", Kind: ptr.To(trainer.TrainingRuntimeKind)}
		gomega.Expect(manager.Create(ctx, tj)).To(gomega.Succeed())
		key := client.ObjectKeyFromObject(tj)
		w, _ := expectDispatched(key)
		expectRunningOn(w, key, 1)
		gomega.Eventually(func(g gomega.Gomega) {
			there := copyOn(g, w, key)
			g.Expect(there).NotTo(gomega.BeNil())
			g.Expect(there.Status.DisabledFeatures).To(gomega.ContainElement(gomega.HaveField("Name", "GangScheduling")), "on %s", w.name)
		}).Should(gomega.Succeed())

		expectManagerCondition(key, trainer.TrainJobComplete)
		here := &unstructured.Unstructured{}
		here.SetGroupVersionKind(trainer.GroupVersion.WithKind(trainer.TrainJobKind))
		gomega.Expect(manager.Get(ctx, key, here)).To(gomega.Succeed())
		status, _, _ := unstructured.NestedMap(here.Object, "status")
		gomega.Expect(status).To(gomega.And(gomega.HaveKey("conditions"), gomega.HaveKey("jobsStatus")))
		gomega.Expect(status).NotTo(gomega.HaveKey("disabledFeatures"),
			"Kueue copies the status through Kubeflow Trainer's Go type, which has no disabledFeatures")
	})
})

// volcanoRuntime is a TrainingRuntime whose pods Volcano would gang-schedule.
func volcanoRuntime(ns string) *trainer.TrainingRuntime {
	ctr := &trainer.ClusterTrainingRuntime{}
	gomega.Expect(manager.Get(ctx, client.ObjectKey{Name: "torch-distributed"}, ctr)).To(gomega.Succeed())
	rt := &trainer.TrainingRuntime{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "volcano"},
		Spec:       *ctr.Spec.DeepCopy(),
	}
	rt.Spec.PodGroupPolicy = &trainer.PodGroupPolicy{PodGroupPolicySource: trainer.PodGroupPolicySource{
		Volcano: &trainer.VolcanoPodGroupPolicySource{},
	}}
	return rt
}

// reportProgress posts a progress report to the worker's status server as the TrainJob's pods
// would: a token of the namespace's default ServiceAccount for the TrainJob's audience, the
// server checked with the CA Gantry published in the namespace. The worker's manager writes it
// into its copy's status; Kueue has to carry it to the manager.
func reportProgress(w *member, key client.ObjectKey, percent int32) {
	ginkgo.GinkgoHelper()
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: "default"}}
	tr := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{
		Audiences: []string{trainjobstatus.Audience(key.Namespace, key.Name)}, ExpirationSeconds: ptr.To[int64](600),
	}}
	gomega.Expect(w.SubResource("token").Create(ctx, sa, tr)).To(gomega.Succeed())
	cm := &corev1.ConfigMap{}
	gomega.Eventually(func() error {
		return w.Get(ctx, client.ObjectKey{Namespace: key.Namespace, Name: trainjobstatus.CAConfigMapName}, cm)
	}).Should(gomega.Succeed())
	roots := x509.NewCertPool()
	gomega.Expect(roots.AppendCertsFromPEM([]byte(cm.Data[trainjobstatus.CAKey]))).To(gomega.BeTrue())
	body, err := json.Marshal(map[string]any{"trainerStatus": map[string]any{
		"progressPercentage": percent, "estimatedRemainingSeconds": 60,
		"metrics":         []any{map[string]any{"name": "loss", "value": "0.25"}},
		"lastUpdatedTime": time.Now().UTC().Format(time.RFC3339),
	}})
	gomega.Expect(err).NotTo(gomega.HaveOccurred())
	url := fmt.Sprintf("https://127.0.0.1:%d%s", w.lc.Settings.Ports.GantryStatus, trainjobstatus.Path(key.Namespace, key.Name))
	hc := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots}}}
	defer hc.CloseIdleConnections()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	gomega.Expect(err).NotTo(gomega.HaveOccurred())
	req.Header.Set("Authorization", "Bearer "+tr.Status.Token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := hc.Do(req)
	gomega.Expect(err).NotTo(gomega.HaveOccurred())
	defer func() { _ = resp.Body.Close() }()
	answer, _ := io.ReadAll(resp.Body)
	gomega.Expect(resp.StatusCode).To(gomega.Equal(http.StatusOK), "the status server of %s: %s", w.name, answer)
}

// expectGantrySeesAcross runs gantry get and logs on the manager for a job running on worker w:
// they name the worker and read its pods and rank 0's log there, through the manager's
// kubeconfig Secret for w.
func expectGantrySeesAcross(w *member, key client.ObjectKey) {
	ginkgo.GinkgoHelper()
	var rank0 string
	gomega.Eventually(func(g gomega.Gomega) {
		for _, p := range runningPods(g, w, key) {
			if p.Labels[jobsetv1alpha2.ReplicatedJobNameKey] == "node" && p.Labels[jobsetv1alpha2.JobIndexKey] == "0" && p.Annotations[batchv1.JobCompletionIndexAnnotation] == "0" {
				rank0 = p.Name
			}
		}
		g.Expect(rank0).NotTo(gomega.BeEmpty(), "rank 0's pod on %s", w.name)
	}).Should(gomega.Succeed())
	logName := "multikueue-" + key.Namespace
	gomega.Expect(w.lc.SetPodLogs(ctx, key.Namespace, rank0, logName)).To(gomega.Succeed())
	gomega.Expect(w.lc.AppendPodLogs(logName, "hello from "+w.name)).To(gomega.Succeed())

	kubeconfig := "--kubeconfig=" + manager.lc.Kubeconfig()
	out, err := exec.Command(gantryBin, "get", key.Name, "-n", key.Namespace, kubeconfig).CombinedOutput()
	gomega.Expect(err).NotTo(gomega.HaveOccurred(), "gantry get: %s", out)
	ginkgo.GinkgoWriter.Printf("gantry get %s on the manager:\n%s\n", key.Name, out)
	gomega.Expect(string(out)).To(gomega.MatchRegexp(`(?m)^Worker:\s+` + w.name + ` \(MultiKueue\)$`))
	gomega.Expect(string(out)).To(gomega.ContainSubstring("Steps (on worker " + w.name + "):"))
	gomega.Expect(string(out)).To(gomega.MatchRegexp(`(?m)^\s+node-0\s+` + rank0 + `\s+Running`))

	gomega.Eventually(func(g gomega.Gomega) {
		out, err := exec.Command(gantryBin, "logs", key.Name, "-n", key.Namespace, kubeconfig).CombinedOutput()
		g.Expect(err).NotTo(gomega.HaveOccurred(), "gantry logs: %s", out)
		g.Expect(string(out)).To(gomega.ContainSubstring("hello from " + w.name))
	}).Should(gomega.Succeed())
}
