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

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/gantry-ml/gantry/internal/jobview"
)

type eventsOptions struct {
	*Options
	out   *outputFlags
	watch bool
}

func newEventsCommand(o *Options) *cobra.Command {
	eo := &eventsOptions{Options: o}
	cmd := &cobra.Command{
		Use:   "events NAME",
		Short: "Print the events of a TrainJob, its JobSet, Jobs and pods, oldest first",
		Long: `Print the events about a TrainJob and the objects it runs (its JobSet, Jobs and pods),
merged and ordered by time, oldest first. --watch then prints new events as they come.`,
		Example: `  gantry events my-job
  gantry events my-job --watch`,
		Args:              exactlyOneName,
		ValidArgsFunction: o.completeJobs,
		RunE:              func(cmd *cobra.Command, args []string) error { return eo.run(cmd.Context(), args[0]) },
	}
	eo.out = addOutputFlags(cmd, true)
	cmd.Flags().BoolVarP(&eo.watch, "watch", "w", false, "After the events so far, print new ones as they come.")
	return cmd
}

func (eo *eventsOptions) run(ctx context.Context, name string) error {
	if eo.watch && !eo.out.table() {
		return usageErrorf("--watch prints tables only; leave out -o %s", eo.out.format())
	}
	ns, err := eo.Namespace()
	if err != nil {
		return err
	}
	r, err := eo.Reader()
	if err != nil {
		return err
	}
	tj, err := r.TrainJob(ctx, ns, name)
	if err != nil {
		return notFoundJob(err, ns, name)
	}
	rjobs := map[string]bool{}
	for _, js := range tj.Status.JobsStatus {
		rjobs[js.Name] = true
	}
	list := &corev1.EventList{}
	if err := r.Client.List(ctx, list, client.InNamespace(ns)); err != nil {
		return err
	}
	events := jobview.Events(name, rjobs, list.Items)
	if !eo.out.table() {
		doc := map[string]any{"apiVersion": jobview.APIVersion, "kind": "TrainJobEventList", "items": events}
		return eo.out.printDocument(eo.Streams.Out, doc, nil)
	}
	printEvents(eo.Streams.Out, eo.Now(), events, "", !eo.out.noHeaders)
	if !eo.watch {
		return nil
	}
	return watchFrom(ctx, r.Client, &corev1.EventList{}, list.ResourceVersion, []client.ListOption{client.InNamespace(ns)},
		func(ev watch.Event) error {
			e, ok := ev.Object.(*corev1.Event)
			if !ok || ev.Type == watch.Deleted {
				return nil
			}
			tw := tableWriter(eo.Streams.Out)
			for _, got := range jobview.Events(name, rjobs, []corev1.Event{*e}) {
				row(tw, age(eo.Now(), got.Time), got.Type, got.Reason, eventObject(got), got.Message)
			}
			return tw.Flush()
		})
}
