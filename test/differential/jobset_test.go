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

package differential

import (
	"context"
	"strings"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// JobSet's webhook messages (sigs.k8s.io/jobset pkg/webhooks) for the refusals below.
const (
	jobSetPodNamesTooLong = "JobSet name is too long, pod names generated for this JobSet will exceed 63 characters"
	jobSetJobNamesTooLong = "JobSet name is too long, job names generated for this JobSet will exceed 63 characters"
	jobSetFirstDependsOn  = "DependsOn can't be set for the first ReplicatedJob"
)

// Kubeflow Trainer v2.3.0's integration suite has specs that pass only because its envtest runs
// no JobSet webhook: the reference admits the TrainJob and builds a JobSet that JobSet refuses,
// so the job never starts. Gantry refuses those at admission, quoting JobSet's rule. Here the
// reference admits each case, builds its JobSet, and that JobSet goes to an apiserver with
// JobSet's CRD and JobSet's own webhooks: where JobSet refuses it, Gantry's refusal quotes
// JobSet's message; where JobSet accepts it, Gantry accepts the case (but for a replicated job
// waiting for itself, which JobSet accepts and never starts).
var _ = ginkgo.Describe("JobSet's answer to the JobSets Kubeflow Trainer v2.3.0 builds", func() {
	ginkgo.DescribeTable("for the reference's own fixtures",
		func(ctx context.Context, c *Case, jobSetRefusal, gantryRefusal string) {
			for _, obj := range []map[string]any{c.Runtime, c.TrainJob} {
				gomega.Expect(schemaErrors(ctx, gantry.schemas, obj)).To(gomega.BeEmpty(), "the schema defaults of %s", obj["kind"])
			}
			refRuntime, crashed := reference.AdmitRuntime(ctx, c.DeepCopy().Runtime)
			gomega.Expect(crashed).NotTo(gomega.HaveOccurred())
			gomega.Expect(refRuntime).To(gomega.BeEmpty(), "the reference refuses the runtime")
			refJob, crashed := reference.AdmitTrainJob(ctx, c.DeepCopy().Runtime, c.DeepCopy().TrainJob)
			gomega.Expect(crashed).NotTo(gomega.HaveOccurred())
			gomega.Expect(refJob).To(gomega.BeEmpty(), "the reference refuses the TrainJob")

			objs, err := reference.Objects(ctx, c.DeepCopy().Runtime, c.DeepCopy().TrainJob)
			gomega.Expect(err).NotTo(gomega.HaveOccurred())
			var js map[string]any
			for _, o := range objs {
				if o["kind"] == "JobSet" {
					js = o
				}
			}
			gomega.Expect(js).NotTo(gomega.BeNil(), "the reference built no JobSet")
			err = dryRun(ctx, js)
			if jobSetRefusal == "" {
				gomega.Expect(err).NotTo(gomega.HaveOccurred(), "JobSet refuses the reference's JobSet")
			} else {
				gomega.Expect(apierrors.IsInvalid(err)).To(gomega.BeTrue(), "JobSet's answer: %v", err)
				gomega.Expect(err.Error()).To(gomega.ContainSubstring(jobSetRefusal))
			}

			got := describe(gantry.AdmitRuntime(ctx, c.DeepCopy().Runtime))
			if got == "" {
				got = describe(gantry.AdmitTrainJob(ctx, c.DeepCopy().Runtime, c.DeepCopy().TrainJob))
			}
			if gantryRefusal == "" {
				gomega.Expect(got).To(gomega.BeEmpty(), "Gantry refuses the case")
			} else {
				gomega.Expect(got).To(gomega.ContainSubstring(gantryRefusal))
			}
		},
		ginkgo.Entry("its webhook suite's TrainJob named with exactly 63 characters, on a runtime with a dataset-initializer job",
			UpstreamNamedJob("abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyzabcdefghijk"),
			jobSetJobNamesTooLong, `metadata.name: Invalid value: "abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyzabcdefghijk": `+
				`must be no more than 33 characters with runtime "upstream-runtime"`),
		ginkgo.Entry("the same with 34 characters: the pods' names are too long, and Gantry quotes that",
			UpstreamNamedJob("abcdefghijklmnopqrstuvwxyzabcdefgh"), jobSetPodNamesTooLong, `("`+jobSetPodNamesTooLong+`")`),
		ginkgo.Entry("the same with 33 characters, Gantry's limit for that runtime", UpstreamNamedJob("abcdefghijklmnopqrstuvwxyzabcdefg"), "", ""),
		ginkgo.Entry("its controller suite's OpenMPI runtime, whose launcher depends on node, listed after it",
			UpstreamDependsOn("launcher", "node"), "replicatedJob: launcher cannot depend on replicatedJob: node",
			`spec.template.spec.replicatedJobs[2].dependsOn[0].name: Invalid value: "node": must name a replicated job listed before "launcher": `+
				`JobSet refuses the JobSet of every TrainJob of this runtime ("replicatedJob: launcher cannot depend on replicatedJob: node")`),
		ginkgo.Entry("that runtime with node depending on the launcher, listed before it", UpstreamDependsOn("node", "launcher"), "", ""),
		ginkgo.Entry("that runtime with the first job depending on another", UpstreamDependsOn("dataset-initializer", "node"),
			jobSetFirstDependsOn, `("`+jobSetFirstDependsOn+`")`),
		ginkgo.Entry("that runtime with node depending on itself, which JobSet accepts and never starts", UpstreamDependsOn("node", "node"),
			"", "JobSet accepts a replicated job that waits for itself, and never creates its Jobs"),
	)

	// The reference merges runtime patches into the template before it checks that they name
	// what the runtime has, so a patch of a container the job lacks adds one without an image;
	// Gantry refuses the patch. JobSet accepts the JobSet; the apiserver refuses every Job of it.
	ginkgo.It("leaves the Jobs of a reference JobSet with a patch of a container the runtime lacks to the apiserver, which refuses them", func(ctx context.Context) {
		c := UpstreamNamedJob("patched")
		c.TrainJob["spec"].(map[string]any)["runtimePatches"] = []any{map[string]any{
			"manager": "example.com/sidecar",
			"trainingRuntimeSpec": map[string]any{"template": map[string]any{"spec": map[string]any{"replicatedJobs": []any{
				map[string]any{"name": "node", "template": map[string]any{"spec": map[string]any{"template": map[string]any{"spec": map[string]any{
					"containers": []any{map[string]any{"name": "sidecar", "env": []any{map[string]any{"name": "A", "value": "1"}}}},
				}}}}},
			}}}},
		}}
		for _, obj := range []map[string]any{c.Runtime, c.TrainJob} {
			gomega.Expect(schemaErrors(ctx, gantry.schemas, obj)).To(gomega.BeEmpty())
		}
		refJob, crashed := reference.AdmitTrainJob(ctx, c.DeepCopy().Runtime, c.DeepCopy().TrainJob)
		gomega.Expect(crashed).NotTo(gomega.HaveOccurred())
		gomega.Expect(refJob).To(gomega.BeEmpty(), "the reference refuses the TrainJob")
		gomega.Expect(describe(gantry.AdmitTrainJob(ctx, c.DeepCopy().Runtime, c.DeepCopy().TrainJob))).To(gomega.ContainSubstring(
			`containers[0].name: Invalid value: "sidecar": must not have container that doesn't exist in the runtime job node`))

		objs, err := reference.Objects(ctx, c.DeepCopy().Runtime, c.DeepCopy().TrainJob)
		gomega.Expect(err).NotTo(gomega.HaveOccurred())
		js, err := jobSetOf(objs)
		gomega.Expect(err).NotTo(gomega.HaveOccurred())
		for _, o := range objs {
			if o["kind"] == "JobSet" {
				gomega.Expect(dryRun(ctx, o)).To(gomega.Succeed(), "JobSet refuses the JobSet")
			}
		}
		var node *batchv1.JobTemplateSpec
		for i := range js.Spec.ReplicatedJobs {
			if js.Spec.ReplicatedJobs[i].Name == "node" {
				node = &js.Spec.ReplicatedJobs[i].Template
			}
		}
		gomega.Expect(node).NotTo(gomega.BeNil())
		// A Job of the replicated job as JobSet creates it: its webhook defaults the restart policy.
		job := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "patched-node-0", Namespace: "default"}, Spec: node.Spec}
		if job.Spec.Template.Spec.RestartPolicy == "" {
			job.Spec.Template.Spec.RestartPolicy = corev1.RestartPolicyOnFailure
		}
		err = servedClient.Create(ctx, job, client.DryRunAll)
		gomega.Expect(apierrors.IsInvalid(err)).To(gomega.BeTrue(), "the apiserver's answer: %v", err)
		gomega.Expect(strings.Contains(err.Error(), "image: Required value")).To(gomega.BeTrue(), "the apiserver's answer: %v", err)
	})
})
