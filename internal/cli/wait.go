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
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
	"github.com/gantry-ml/gantry/internal/jobview"
	"github.com/gantry-ml/gantry/internal/trainjob"
)

type waitOptions struct {
	*Options
	forWhat string
	timeout time.Duration
}

func newWaitCommand(o *Options) *cobra.Command {
	wo := &waitOptions{Options: o}
	cmd := &cobra.Command{
		Use:   "wait NAME",
		Short: "Wait until a TrainJob is Complete (or another state); exit 1 if it fails",
		Long: `Wait until a TrainJob reaches a state: Complete (the default), Failed, Running, Suspended,
Queued, Created or Restarting, or until one of its conditions is True (--for condition=TYPE).
It watches the TrainJob, so it answers as soon as the state changes.

While waiting for anything but Failed, a TrainJob that fails ends the wait with exit code 1
(the Kubeflow Python SDK's wait_for_job_status does the same). A completed job satisfies
--for Running; a completed job waited for as anything else ends the wait with 7.

` + ExitCodesHelp + ` Here: 0 reached, 1 the job failed, 3 --timeout passed, 4 no such TrainJob
or it was deleted.`,
		Example: `  gantry wait my-job --timeout 1h
  gantry wait my-job --for Running --timeout 5m
  gantry wait my-job --for condition=Suspended`,
		Args:              exactlyOneName,
		ValidArgsFunction: o.completeJobs,
		RunE:              func(cmd *cobra.Command, args []string) error { return wo.run(cmd.Context(), args[0]) },
	}
	cmd.Flags().StringVar(&wo.forWhat, "for", "Complete", "The state (Complete, Failed, Running, Suspended, Queued, Created, Restarting) or condition=TYPE to wait for.")
	cmd.Flags().DurationVar(&wo.timeout, "timeout", 10*time.Minute, "Give up after this long (exit code 3); 0 waits forever.")
	_ = cmd.RegisterFlagCompletionFunc("for", completeStates)
	return cmd
}

// target is what a wait ends on.
type target struct {
	state     trainjob.State
	condition string
}

func parseTarget(s string) (target, error) {
	if c, ok := strings.CutPrefix(s, "condition="); ok {
		if c == "" {
			return target{}, usageErrorf("--for condition= needs a condition type, e.g. condition=Complete")
		}
		return target{condition: c}, nil
	}
	st, err := trainjob.ParseState(s)
	if err != nil {
		return target{}, withCode(ExitUsage, fmt.Errorf("--for: %w (or condition=TYPE)", err))
	}
	return target{state: st}, nil
}

func (t target) String() string {
	if t.condition != "" {
		return "condition " + t.condition + "=True"
	}
	return string(t.state)
}

// reached reports whether the job is where the wait wants it, and an error when it never will be.
func (t target) reached(tj *trainer.TrainJob, s *jobview.Summary) (bool, error) {
	if t.condition != "" {
		if c := meta.FindStatusCondition(tj.Status.Conditions, t.condition); c != nil && c.Status == metav1.ConditionTrue {
			return true, nil
		}
	} else if s.State == t.state || (t.state == trainjob.StateRunning && s.State == trainjob.StateComplete) {
		return true, nil
	}
	switch {
	case s.State == trainjob.StateFailed:
		return false, withCode(ExitJobFailed, fmt.Errorf("TrainJob %s failed: %s", tj.Name, s.Message))
	case s.State.Terminal():
		// Complete while waiting for Suspended is no failed training: not 1.
		return false, withCode(ExitOther, fmt.Errorf("TrainJob %s is %s and will never be %s", tj.Name, s.State, t))
	}
	return false, nil
}

func (wo *waitOptions) run(ctx context.Context, name string) error {
	t, err := parseTarget(wo.forWhat)
	if err != nil {
		return err
	}
	ns, err := wo.Namespace()
	if err != nil {
		return err
	}
	s, err := wo.waitFor(ctx, ns, name, wo.timeout, t.String(), t.reached)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(wo.Streams.Out, "trainjob.trainer.kubeflow.org/%s is %s\n", name, waitedText(t, s))
	return err
}

func waitedText(t target, s *jobview.Summary) string {
	if t.condition != "" {
		return t.String()
	}
	return string(s.State)
}

// errGone ends a wait whose TrainJob was deleted.
var errGone = errors.New("deleted")

// waitFor watches a TrainJob until done says so or fails. A zero timeout waits forever.
func (o *Options) waitFor(ctx context.Context, ns, name string, timeout time.Duration, what string,
	done func(*trainer.TrainJob, *jobview.Summary) (bool, error)) (*jobview.Summary, error) {
	r, err := o.Reader()
	if err != nil {
		return nil, err
	}
	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	var last *jobview.Summary
	check := func(tj *trainer.TrainJob) (bool, error) {
		s := r.Summarize(ctx, tj)
		last = &s
		return done(tj, &s)
	}
	for {
		tj, err := r.TrainJob(ctx, ns, name)
		if err != nil {
			return last, o.waitError(ctx, err, ns, name, what, timeout, last)
		}
		if ok, err := check(tj); ok || err != nil {
			return last, err
		}
		ok, err := o.watchUntil(ctx, r, tj, check)
		if ok || (err != nil && !errors.Is(err, errWatchClosed)) {
			return last, o.waitError(ctx, err, ns, name, what, timeout, last)
		}
		// The apiserver closed the watch: read the job again and go on.
	}
}

var errWatchClosed = errors.New("watch closed")

func (o *Options) watchUntil(ctx context.Context, r *jobview.Reader, tj *trainer.TrainJob,
	check func(*trainer.TrainJob) (bool, error)) (bool, error) {
	return watchOne(ctx, r.Client, &trainer.TrainJobList{}, tj, check)
}

// watchOne watches the one object obj names, from its resourceVersion, until check says done or
// fails; errGone when it is deleted, errWatchClosed when the watch ends (start over from a read).
func watchOne[T client.Object](ctx context.Context, c client.WithWatch, list client.ObjectList, obj T,
	check func(T) (bool, error)) (bool, error) {
	w, err := c.Watch(ctx, list, client.InNamespace(obj.GetNamespace()),
		client.MatchingFieldsSelector{Selector: fields.OneTermEqualSelector("metadata.name", obj.GetName())},
		&client.ListOptions{Raw: &metav1.ListOptions{ResourceVersion: obj.GetResourceVersion()}})
	if err != nil {
		return false, err
	}
	defer w.Stop()
	for {
		select {
		case <-ctx.Done():
			return false, ctx.Err()
		case ev, open := <-w.ResultChan():
			if !open {
				return false, errWatchClosed
			}
			switch ev.Type {
			case watch.Deleted:
				return false, errGone
			case watch.Error:
				return false, errWatchClosed // e.g. 410 Gone: start over from a fresh read
			}
			if cur, ok := ev.Object.(T); ok {
				if ok, err := check(cur); ok || err != nil {
					return ok, err
				}
			}
		}
	}
}

func (o *Options) waitError(ctx context.Context, err error, ns, name, what string, timeout time.Duration, last *jobview.Summary) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, errGone):
		return withCode(ExitNotFound, fmt.Errorf("TrainJob %s was deleted while waiting for it to be %s", name, what))
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		msg := fmt.Sprintf("timed out after %s waiting for TrainJob %s to be %s", timeout, name, what)
		if last != nil {
			msg += fmt.Sprintf(" (it is %s)", last.State)
		}
		return withCode(ExitTimeout, errors.New(msg))
	default:
		return notFoundJob(err, ns, name)
	}
}

// notFoundJob names the job and namespace in a NotFound error.
func notFoundJob(err error, ns, name string) error {
	if apierrors.IsNotFound(err) {
		return withCode(ExitNotFound, fmt.Errorf("TrainJob %q not found in namespace %q", name, ns))
	}
	return err
}
