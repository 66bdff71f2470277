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

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// watchFrom follows a list with a watch from its resourceVersion until ctx ends. When the
// apiserver ends the watch (its timeout, or 410 Gone after a compaction), it lists again and
// goes on from there: the user asked to watch until they stop it.
func watchFrom(ctx context.Context, c client.WithWatch, list client.ObjectList, rv string, opts []client.ListOption,
	handle func(watch.Event) error) error {
	for {
		w, err := c.Watch(ctx, list, append(opts, &client.ListOptions{Raw: &metav1.ListOptions{ResourceVersion: rv}})...)
		if err != nil {
			return orCanceled(ctx, err)
		}
		err = drain(ctx, w, handle)
		w.Stop()
		if err != nil || ctx.Err() != nil {
			return orCanceled(ctx, err)
		}
		relisted, ok := list.DeepCopyObject().(client.ObjectList)
		if !ok {
			return fmt.Errorf("%T is not a list", list)
		}
		if err := c.List(ctx, relisted, opts...); err != nil {
			return orCanceled(ctx, err)
		}
		rv = relisted.GetResourceVersion()
	}
}

// drain handles events until the watch ends (nil) or handle fails.
func drain(ctx context.Context, w watch.Interface, handle func(watch.Event) error) error {
	for {
		select {
		case <-ctx.Done():
			return nil
		case ev, open := <-w.ResultChan():
			if !open || ev.Type == watch.Error {
				return nil
			}
			if err := handle(ev); err != nil {
				return err
			}
		}
	}
}

// orCanceled: a watch the user stopped ends without an error.
func orCanceled(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return nil
	}
	return err
}
