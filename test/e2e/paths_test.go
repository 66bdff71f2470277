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

package e2e

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"maps"
	"net/http"
	"time"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	jobsetv1alpha2 "sigs.k8s.io/jobset/api/jobset/v1alpha2"
	schedulerpluginsv1alpha1 "sigs.k8s.io/scheduler-plugins/apis/scheduling/v1alpha1"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
	"github.com/gantry-ml/gantry/internal/controller"
	"github.com/gantry-ml/gantry/internal/runtime/framework"
	"github.com/gantry-ml/gantry/internal/runtime/plugins/trainjobstatus"
	"github.com/gantry-ml/gantry/test/localcluster"
)

// The paths of the manager beyond a TrainJob's run: refusals, repairs, certificate rotation,
// gang scheduling, metrics. Between them and the other specs, the manager uses every permission
// config/rbac grants it, but for the two rbac_test.go lists (which checks that it did).
var _ = ginkgo.Describe("The manager beyond running TrainJobs", func() {
	var ns string
	ginkgo.BeforeEach(func() { ns = newNamespace("e2e") })

	ginkgo.It("refuses a TrainJob whose runtime neither its cache nor the apiserver has", func() {
		for _, kind := range []string{clusterRuntime, nsRuntime} {
			err := k8sClient.Create(ctx, trainJob(ns, "orphan", kind, "no-such-runtime", 1, 1), client.DryRunAll)
			// Kueue's TrainJob webhook refuses it too, and either answer may come first.
			gomega.Expect(err).To(gomega.MatchError(gomega.ContainSubstring("no-such-runtime")), kind)
		}
	})

	ginkgo.It("removes the in-use finalizer Kubeflow Trainer put on runtimes", func() {
		rt := versionedRuntime(ns, "v1")
		rt.Finalizers = []string{trainer.ResourceInUseFinalizer}
		crt := &trainer.ClusterTrainingRuntime{
			ObjectMeta: metav1.ObjectMeta{Name: "legacy-" + ns, Finalizers: rt.Finalizers},
			Spec:       rt.Spec,
		}
		gomega.Expect(k8sClient.Create(ctx, rt)).To(gomega.Succeed())
		gomega.Expect(k8sClient.Create(ctx, crt)).To(gomega.Succeed())
		ginkgo.DeferCleanup(func() { gomega.Expect(client.IgnoreNotFound(k8sClient.Delete(ctx, crt))).To(gomega.Succeed()) })
		for _, obj := range []client.Object{rt, crt} {
			gomega.Eventually(func(g gomega.Gomega) {
				g.Expect(k8sClient.Get(ctx, keyOf(obj), obj)).To(gomega.Succeed())
				g.Expect(obj.GetFinalizers()).To(gomega.BeEmpty())
			}).Should(gomega.Succeed(), obj.GetName())
		}
	})

	ginkgo.It("does not adopt a ConfigMap or Secret it did not create, says so on every retry, and goes on once it is gone", func() {
		cases := []struct {
			tj      *trainer.TrainJob
			jobs    []string
			foreign client.Object
			kind    string
		}{{
			tj: trainJob(ns, "squatted", clusterRuntime, "deepspeed-distributed", 2, 1), jobs: []string{"launcher", "node"}, kind: "ConfigMap",
			foreign: &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "squatted-mpi-hostfile"}, Data: map[string]string{"owner": "someone else"}},
		}, {
			tj: trainJob(ns, "squatted-mpi", clusterRuntime, "deepspeed-distributed", 2, 1), jobs: []string{"launcher", "node"}, kind: "Secret",
			foreign: &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "squatted-mpi-mpi-ssh-auth"}, StringData: map[string]string{"owner": "someone else"}},
		}}
		for _, tc := range cases {
			sim := map[string]map[string]string{}
			for _, job := range tc.jobs {
				sim[job] = map[string]string{simDuration: "1s"}
			}
			simulate(tc.tj, sim)
			gomega.Expect(k8sClient.Create(ctx, tc.foreign)).To(gomega.Succeed())
			gomega.Expect(k8sClient.Create(ctx, tc.tj)).To(gomega.Succeed())
		}
		for _, tc := range cases {
			// The core/v1 event recorder counts a repeated event up (a patch) instead of adding one.
			gomega.Eventually(func(g gomega.Gomega) {
				ev := warningOf(g, tc.tj, controller.ReasonResourcesCreationFailed)
				g.Expect(ev.Message).To(gomega.ContainSubstring("%s %s/%s exists and is not owned by this TrainJob", tc.kind, ns, tc.foreign.GetName()))
				g.Expect(ev.Count).To(gomega.BeNumerically(">=", 2))
			}).Should(gomega.Succeed(), tc.tj.Name)
			gomega.Expect(k8sClient.Get(ctx, keyOf(tc.foreign), tc.foreign)).To(gomega.Succeed())
			gomega.Expect(tc.foreign.GetOwnerReferences()).To(gomega.BeEmpty(), tc.kind)
			gomega.Expect(apierrors.IsNotFound(k8sClient.Get(ctx, keyOf(tc.tj), &jobsetv1alpha2.JobSet{}))).To(gomega.BeTrue(), "JobSet of %s", tc.tj.Name)
		}
		for _, tc := range cases {
			gomega.Expect(k8sClient.Delete(ctx, tc.foreign)).To(gomega.Succeed())
			expectCondition(keyOf(tc.tj), trainer.TrainJobComplete)
		}
	})

	ginkgo.It("puts back the content of a ConfigMap it owns, and of the namespace's CA ConfigMap, while the TrainJob runs", func() {
		tj := trainJob(ns, "owned", clusterRuntime, "deepspeed-distributed", 2, 1)
		simulate(tj, map[string]map[string]string{"launcher": {simDuration: "10m"}, "node": {simDuration: "10m"}})
		gomega.Expect(k8sClient.Create(ctx, tj)).To(gomega.Succeed())
		gomega.Eventually(func() []string { return runningPods(ns, tj.Name) }).ShouldNot(gomega.BeEmpty())

		for _, name := range []string{tj.Name + "-mpi-hostfile", trainjobstatus.CAConfigMapName} {
			cm := &corev1.ConfigMap{}
			key := types.NamespacedName{Namespace: ns, Name: name}
			var want map[string]string
			gomega.Eventually(func() error {
				if err := k8sClient.Get(ctx, key, cm); err != nil {
					return err
				}
				want = maps.Clone(cm.Data)
				for k := range cm.Data {
					cm.Data[k] = "tampered"
				}
				return k8sClient.Update(ctx, cm)
			}).Should(gomega.Succeed(), name)
			gomega.Eventually(func(g gomega.Gomega) {
				g.Expect(k8sClient.Get(ctx, key, cm)).To(gomega.Succeed())
				g.Expect(cm.Data).To(gomega.Equal(want))
			}).Should(gomega.Succeed(), name)
		}
	})

	ginkgo.It("fails a running TrainJob whose JobSet was removed without it, and does not run it again", func() {
		tj := trainJob(ns, "orphaned", clusterRuntime, "torch-distributed", 1, 1)
		simulate(tj, map[string]map[string]string{"node": {simDuration: "10m"}})
		gomega.Expect(k8sClient.Create(ctx, tj)).To(gomega.Succeed())
		gomega.Eventually(func(g gomega.Gomega) {
			g.Expect(runningPods(ns, tj.Name)).To(gomega.HaveLen(1))
			g.Expect(getTrainJob(keyOf(tj)).Status.JobsStatus).NotTo(gomega.BeEmpty())
		}).Should(gomega.Succeed())

		// Without its finalizer the JobSet goes at once: the manager never sees it being deleted,
		// only missing, and must ask the apiserver whether it is really gone. The manager puts
		// its finalizer back when it sees the JobSet without it, so the delete is made only on
		// the version without one (a precondition); otherwise the manager may see the deletion
		// after all, and the path this spec is about (and the RBAC audit's gets) goes untried.
		gomega.Eventually(func() error {
			js := jobSetOf(keyOf(tj))
			patch := client.MergeFrom(js.DeepCopy())
			js.Finalizers = nil
			if err := k8sClient.Patch(ctx, js, patch); err != nil {
				return err
			}
			return k8sClient.Delete(ctx, js, client.PropagationPolicy(metav1.DeletePropagationBackground),
				client.Preconditions{ResourceVersion: &js.ResourceVersion})
		}).Should(gomega.Succeed())

		failed := expectCondition(keyOf(tj), trainer.TrainJobFailed)
		gomega.Expect(failed.Reason).To(gomega.Equal(controller.ReasonJobSetDeleted))
		gomega.Expect(failed.Message).To(gomega.ContainSubstring("delete the TrainJob and create it again"))
		gomega.Consistently(func() bool {
			return apierrors.IsNotFound(k8sClient.Get(ctx, keyOf(tj), &jobsetv1alpha2.JobSet{}))
		}, 3*time.Second).Should(gomega.BeTrue(), "JobSet built again")

		// What the message says not to rely on: a suspend and resume does not run it again.
		setSuspend(keyOf(tj), true)
		setSuspend(keyOf(tj), false)
		gomega.Consistently(func() bool {
			return apierrors.IsNotFound(k8sClient.Get(ctx, keyOf(tj), &jobsetv1alpha2.JobSet{}))
		}, 3*time.Second).Should(gomega.BeTrue(), "JobSet built again after a suspend and resume")
	})

	ginkgo.It("gives a coscheduling TrainJob a PodGroup sized for its pods as the cluster defaults them", func() {
		gomega.Expect(k8sClient.Create(ctx, &corev1.LimitRange{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "defaults"},
			Spec: corev1.LimitRangeSpec{Limits: []corev1.LimitRangeItem{{
				Type: corev1.LimitTypeContainer, DefaultRequest: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("1Gi")},
			}}},
		})).To(gomega.Succeed())
		rt := versionedRuntime(ns, "v1")
		rt.Spec.PodGroupPolicy = &trainer.PodGroupPolicy{PodGroupPolicySource: trainer.PodGroupPolicySource{
			Coscheduling: &trainer.CoschedulingPodGroupPolicySource{ScheduleTimeoutSeconds: ptr.To[int32](30)},
		}}
		gomega.Expect(k8sClient.Create(ctx, rt)).To(gomega.Succeed())
		tj := trainJob(ns, "gang", nsRuntime, rt.Name, 2, 1)
		simulate(tj, map[string]map[string]string{"node": {simDuration: "1s"}})
		gomega.Expect(k8sClient.Create(ctx, tj)).To(gomega.Succeed())

		pg := &schedulerpluginsv1alpha1.PodGroup{}
		gomega.Eventually(func() error { return k8sClient.Get(ctx, keyOf(tj), pg) }).Should(gomega.Succeed())
		gomega.Expect(metav1.IsControlledBy(pg, getTrainJob(keyOf(tj)))).To(gomega.BeTrue())
		gomega.Expect(pg.Spec.MinMember).To(gomega.Equal(int32(2)))
		gomega.Expect(pg.Spec.ScheduleTimeoutSeconds).To(gomega.Equal(ptr.To[int32](30)))
		memory, gpus := pg.Spec.MinResources[corev1.ResourceMemory], pg.Spec.MinResources[localcluster.GPUResource]
		gomega.Expect(memory.Cmp(resource.MustParse("2Gi"))).To(gomega.Equal(0), "memory %s: the LimitRange's default request, twice", memory.String())
		gomega.Expect(gpus.Value()).To(gomega.Equal(int64(2)))
		expectCondition(keyOf(tj), trainer.TrainJobComplete)
		for _, p := range podsOf(ns, tj.Name) {
			gomega.Expect(p.Labels).To(gomega.HaveKeyWithValue(schedulerpluginsv1alpha1.PodGroupLabel, tj.Name), p.Name)
		}
	})

	ginkgo.It("runs a TrainJob of a Volcano runtime without a gang where Volcano is not installed, and says so", func() {
		rt := versionedRuntime(ns, "v1")
		rt.Spec.PodGroupPolicy = &trainer.PodGroupPolicy{PodGroupPolicySource: trainer.PodGroupPolicySource{
			Volcano: &trainer.VolcanoPodGroupPolicySource{},
		}}
		gomega.Expect(k8sClient.Create(ctx, rt)).To(gomega.Succeed())
		tj := trainJob(ns, "volcano", nsRuntime, rt.Name, 1, 1)
		simulate(tj, map[string]map[string]string{"node": {simDuration: "1s"}})
		gomega.Expect(k8sClient.Create(ctx, tj)).To(gomega.Succeed())
		expectCondition(keyOf(tj), trainer.TrainJobComplete)
		disabled := getTrainJob(keyOf(tj)).Status.DisabledFeatures
		gomega.Expect(disabled).To(gomega.ConsistOf(gomega.And(
			gomega.HaveField("Name", framework.FeatureGangScheduling),
			gomega.HaveField("Message", gomega.ContainSubstring("is not installed")))))
	})

	ginkgo.It("issues a new serving certificate from its CA when the certificate Secret loses it", func() {
		secret := &corev1.Secret{}
		key := types.NamespacedName{Namespace: "kubeflow-system", Name: "kubeflow-trainer-webhook-cert"}
		gomega.Expect(k8sClient.Get(ctx, key, secret)).To(gomega.Succeed())
		seeded := maps.Clone(secret.Data)
		// The local cluster's certificate also names 127.0.0.1, where the apiserver calls the
		// webhooks; the manager's names only the Service. Until the seeded one is back, the
		// webhooks cannot be called.
		ginkgo.DeferCleanup(restoreWebhookCert, key, seeded)
		delete(secret.Data, corev1.TLSCertKey)
		delete(secret.Data, corev1.TLSPrivateKeyKey)
		gomega.Expect(k8sClient.Update(ctx, secret)).To(gomega.Succeed())

		roots := x509.NewCertPool()
		gomega.Expect(roots.AppendCertsFromPEM(seeded["ca.crt"])).To(gomega.BeTrue())
		gomega.Eventually(func(g gomega.Gomega) {
			g.Expect(k8sClient.Get(ctx, key, secret)).To(gomega.Succeed())
			block, _ := pem.Decode(secret.Data[corev1.TLSCertKey])
			g.Expect(block).NotTo(gomega.BeNil(), "tls.crt")
			cert, err := x509.ParseCertificate(block.Bytes)
			g.Expect(err).NotTo(gomega.HaveOccurred())
			_, err = cert.Verify(x509.VerifyOptions{Roots: roots, DNSName: "kubeflow-trainer-controller-manager.kubeflow-system.svc"})
			g.Expect(err).NotTo(gomega.HaveOccurred())
			g.Expect(secret.Data["ca.crt"]).To(gomega.Equal(seeded["ca.crt"]))
		}).Should(gomega.Succeed())
	})

	ginkgo.It("serves metrics to the clients the apiserver authenticates and authorizes, and only to them", func() {
		sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "scraper"}}
		gomega.Expect(k8sClient.Create(ctx, sa)).To(gomega.Succeed())
		tr := &authenticationv1.TokenRequest{}
		gomega.Expect(k8sClient.SubResource("token").Create(ctx, sa, tr)).To(gomega.Succeed())

		scrape := func(token string) int {
			url := fmt.Sprintf("https://127.0.0.1:%d/metrics", cluster.Settings.Ports.GantryMetrics)
			req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
			gomega.Expect(err).NotTo(gomega.HaveOccurred())
			if token != "" {
				req.Header.Set("Authorization", "Bearer "+token)
			}
			// The metrics server's certificate is self-signed: what is checked here is the client.
			hc := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
				TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, //nolint:gosec // see above
			}}
			resp, err := hc.Do(req)
			gomega.Expect(err).NotTo(gomega.HaveOccurred())
			_ = resp.Body.Close()
			return resp.StatusCode
		}
		gomega.Expect(scrape("")).To(gomega.Equal(http.StatusUnauthorized))
		gomega.Expect(scrape(tr.Status.Token)).To(gomega.Equal(http.StatusForbidden), "a ServiceAccount bound to nothing")
		gomega.Expect(scrape(restConfig.BearerToken)).To(gomega.Equal(http.StatusOK), "the cluster's administrator")
	})
})

// warningOf is the Warning event of reason on the TrainJob.
func warningOf(g gomega.Gomega, tj *trainer.TrainJob, reason string) *corev1.Event {
	events := &corev1.EventList{}
	g.Expect(k8sClient.List(ctx, events, client.InNamespace(tj.Namespace))).To(gomega.Succeed())
	for i := range events.Items {
		ev := &events.Items[i]
		if ev.InvolvedObject.Name == tj.Name && ev.InvolvedObject.Kind == trainer.TrainJobKind && ev.Reason == reason &&
			ev.Type == corev1.EventTypeWarning {
			return ev
		}
	}
	g.Expect(fmt.Sprintf("no Warning event %s on TrainJob %s", reason, tj.Name)).To(gomega.BeEmpty())
	return nil
}

// restoreWebhookCert puts the seeded certificate back and waits until the webhooks answer again
// (the manager copies the Secret to its certificate directory, and its server reloads it).
func restoreWebhookCert(key types.NamespacedName, data map[string][]byte) {
	gomega.Eventually(func() error {
		secret := &corev1.Secret{}
		if err := k8sClient.Get(ctx, key, secret); err != nil {
			return err
		}
		secret.Data = data
		return k8sClient.Update(ctx, secret)
	}).Should(gomega.Succeed())
	probe := trainJob("default", "webhook-probe", clusterRuntime, "torch-distributed", 1, 1)
	gomega.Eventually(func() error { return k8sClient.Create(ctx, probe.DeepCopy(), client.DryRunAll) }).
		Should(gomega.Succeed(), "a dry-run TrainJob through the webhooks")
}
