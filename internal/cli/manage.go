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

package cli

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"
	jobset "sigs.k8s.io/jobset/api/jobset/v1alpha2"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
	"github.com/gantry-ml/gantry/internal/jobview"
	"github.com/gantry-ml/gantry/internal/trainjob"
)

// gonePoll is how often delete --wait looks for what is left; deletion has no single object to
// watch (the TrainJob, its JobSet and every pod must go).
const gonePoll = 500 * time.Millisecond

type deleteOptions struct {
	*Options
	wait    bool
	timeout time.Duration
}

func newDeleteCommand(o *Options) *cobra.Command {
	do := &deleteOptions{Options: o}
	cmd := &cobra.Command{
		Use:   "delete NAME",
		Short: "Delete a TrainJob (and, with it, its JobSet and pods)",
		Long: `Delete a TrainJob; Kubernetes' garbage collector deletes its JobSet, Jobs, pods and the
objects Gantry made for it. --wait returns only once the TrainJob, its JobSet and its pods are
gone (exit code 3 after --timeout).`,
		Example:           `  gantry delete my-job --wait`,
		Args:              exactlyOneName,
		ValidArgsFunction: o.completeJobs,
		RunE:              func(cmd *cobra.Command, args []string) error { return do.run(cmd.Context(), args[0]) },
	}
	cmd.Flags().BoolVar(&do.wait, "wait", false, "Return once the TrainJob, its JobSet and its pods are gone.")
	cmd.Flags().DurationVar(&do.timeout, "timeout", 5*time.Minute, "With --wait, give up after this long (exit code 3).")
	return cmd
}

func (do *deleteOptions) run(ctx context.Context, name string) error {
	ns, err := do.Namespace()
	if err != nil {
		return err
	}
	r, err := do.Reader()
	if err != nil {
		return err
	}
	tj := &trainer.TrainJob{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	if err := r.Client.Delete(ctx, tj, client.PropagationPolicy(metav1.DeletePropagationBackground)); err != nil {
		return notFoundJob(err, ns, name)
	}
	if do.wait {
		if err := do.waitGone(ctx, r, ns, name); err != nil {
			return err
		}
	}
	_, err = fmt.Fprintf(do.Streams.Out, "trainjob.trainer.kubeflow.org/%s deleted\n", name)
	return err
}

func (do *deleteOptions) waitGone(ctx context.Context, r *jobview.Reader, ns, name string) error {
	left := ""
	err := wait.PollUntilContextTimeout(ctx, gonePoll, do.timeout, true, func(ctx context.Context) (bool, error) {
		key := client.ObjectKey{Namespace: ns, Name: name}
		for kind, obj := range map[string]client.Object{"TrainJob": &trainer.TrainJob{}, "JobSet": &jobset.JobSet{}} {
			err := r.Client.Get(ctx, key, obj)
			if err == nil {
				left = kind + " " + name
				return false, nil
			}
			if !apierrors.IsNotFound(err) {
				return false, err
			}
		}
		pods := &corev1.PodList{}
		if err := r.Client.List(ctx, pods, client.InNamespace(ns), client.MatchingLabels{jobset.JobSetNameKey: name}); err != nil {
			return false, err
		}
		left = fmt.Sprintf("%d pods", len(pods.Items))
		return len(pods.Items) == 0, nil
	})
	if wait.Interrupted(err) {
		return withCode(ExitTimeout, fmt.Errorf("timed out after %s waiting for TrainJob %s to be deleted (left: %s)", do.timeout, name, left))
	}
	return err
}

func newSuspendCommand(o *Options, suspend bool) *cobra.Command {
	verb, short := "suspend", "Suspend a TrainJob: its pods are deleted until it is resumed"
	if !suspend {
		verb, short = "resume", "Resume a suspended TrainJob"
	}
	cmd := &cobra.Command{
		Use:   verb + " NAME",
		Short: short,
		Long: short + `.

A TrainJob under Kueue (label kueue.x-k8s.io/queue-name) is suspended and resumed by Kueue,
which would undo this change: use "kubectl kueue stop workload" and "kubectl kueue resume
workload" instead; gantry refuses (exit code 2).`,
		Args:              exactlyOneName,
		ValidArgsFunction: o.completeJobs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return o.setSuspend(cmd.Context(), args[0], suspend)
		},
	}
	return cmd
}

func (o *Options) setSuspend(ctx context.Context, name string, suspend bool) error {
	ns, err := o.Namespace()
	if err != nil {
		return err
	}
	r, err := o.Reader()
	if err != nil {
		return err
	}
	tj, err := r.TrainJob(ctx, ns, name)
	if err != nil {
		return notFoundJob(err, ns, name)
	}
	done := map[bool]string{true: "suspended", false: "resumed"}[suspend]
	if q, ok := tj.Labels[trainjob.QueueLabel]; ok {
		kueueVerb := map[bool]string{true: "stop", false: "resume"}[suspend]
		how := fmt.Sprintf("`kubectl kueue %s workload` on its Workload (kubectl get workloads -n %s -l %s=%s)", kueueVerb, ns, trainjob.WorkloadJobUIDLabel, tj.UID)
		if s := r.Summarize(ctx, tj); s.Workload != nil {
			how = fmt.Sprintf("`kubectl kueue %s workload %s -n %s`", kueueVerb, s.Workload.Name, ns)
		}
		return usageErrorf("TrainJob %s is managed by Kueue (queue %q), which decides when it runs: use %s instead", name, q, how)
	}
	if d := trainjob.DeriveState(tj, nil, nil); d.State.Terminal() {
		return usageErrorf("TrainJob %s is %s: a finished job cannot be %s", name, d.State, done)
	}
	patch := fmt.Sprintf(`{"spec":{"suspend":%t}}`, suspend)
	if err := r.Client.Patch(ctx, tj, client.RawPatch(types.MergePatchType, []byte(patch))); err != nil {
		return err
	}
	_, err = fmt.Fprintf(o.Streams.Out, "trainjob.trainer.kubeflow.org/%s %s\n", name, done)
	return err
}
