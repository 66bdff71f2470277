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

package ui

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
)

// Progress history ConfigMaps (--history=configmap): "<job>-progress", owned by the TrainJob so
// the curve goes with the job, labelled so the UI finds them all with one list at start.
const (
	HistoryLabel     = "ui.gantry.dev/progress-history"
	historySuffix    = "-progress"
	historyKey       = "history.json.gz"
	historyFieldMgr  = "gantry-ui"
	defaultFlushTime = 5 * time.Second
)

// persister writes the series that changed, at most once per interval per job: a job reporting
// every second costs one ConfigMap write every few seconds, not one per report.
type persister struct {
	client   client.Client
	history  *History
	interval time.Duration
	// namespaces, when set, are the only ones restore lists: a UI limited to one namespace
	// needs the ConfigMaps of that namespace only (a Role), not of every one.
	namespaces []string

	mu    sync.Mutex
	dirty map[types.UID]*trainer.TrainJob
}

func newPersister(c client.Client, h *History, interval time.Duration, namespaces []string) *persister {
	if interval <= 0 {
		interval = defaultFlushTime
	}
	return &persister{client: c, history: h, interval: interval, namespaces: namespaces, dirty: map[types.UID]*trainer.TrainJob{}}
}

// mark remembers that a job's series changed.
func (p *persister) mark(tj *trainer.TrainJob) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.dirty[tj.UID] = tj
}

// restore loads every saved series, a page of ConfigMaps at a time so a thousand saved curves
// do not sit in memory twice; a broken one is skipped with its reason, never fatal. Those the
// budget has no room for are told in one error, however many they are.
func (p *persister) restore(ctx context.Context) []error {
	var errs []error
	full := 0
	if len(p.namespaces) == 0 {
		errs = p.restoreIn(ctx, "", &full)
	}
	for _, ns := range p.namespaces {
		errs = append(errs, p.restoreIn(ctx, ns, &full)...)
	}
	if full > 0 {
		errs = append(errs, fmt.Errorf("%d saved progress histories were %w", full, errHistoryFull))
	}
	return errs
}

// restoreIn restores the series saved in namespace ns ("" for every namespace), counting in full
// those the budget has no room for.
func (p *persister) restoreIn(ctx context.Context, ns string, full *int) []error {
	var errs []error
	cont := ""
	for {
		list := &corev1.ConfigMapList{}
		opts := []client.ListOption{client.HasLabels{HistoryLabel}, client.Limit(restorePage), client.Continue(cont)}
		if ns != "" {
			opts = append(opts, client.InNamespace(ns))
		}
		if err := p.client.List(ctx, list, opts...); err != nil {
			return append(errs, fmt.Errorf("listing the progress history ConfigMaps: %w", err))
		}
		for i := range list.Items {
			cm := &list.Items[i]
			owner := metav1.GetControllerOf(cm)
			if owner == nil || owner.Kind != trainer.TrainJobKind {
				continue
			}
			switch err := p.history.Restore(owner.UID, cm.BinaryData[historyKey]); {
			case errors.Is(err, errHistoryFull):
				*full++
			case err != nil:
				errs = append(errs, fmt.Errorf("ConfigMap %s/%s: %w", cm.Namespace, cm.Name, err))
			}
		}
		if cont = list.Continue; cont == "" {
			return errs
		}
	}
}

// restorePage is how many history ConfigMaps one list request reads.
const restorePage = 100

// run flushes until ctx ends, then once more.
func (p *persister) run(ctx context.Context, report func(error)) {
	t := time.NewTicker(p.interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			flushCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			p.flush(flushCtx, report)
			cancel()
			return
		case <-t.C:
			p.flush(ctx, report)
		}
	}
}

func (p *persister) flush(ctx context.Context, report func(error)) {
	p.mu.Lock()
	jobs := p.dirty
	p.dirty = map[types.UID]*trainer.TrainJob{}
	p.mu.Unlock()
	for _, tj := range jobs {
		// Another UI may write the same ConfigMap between this one's read and write (replicas, or
		// the old pod's last flush in a rolling update): write again over what it now holds.
		err := retry.OnError(retry.DefaultRetry, raced, func() error { return p.write(ctx, tj) })
		if err != nil && !apierrors.IsNotFound(err) && report != nil {
			report(fmt.Errorf("saving the progress history of TrainJob %s/%s: %w", tj.Namespace, tj.Name, err))
		}
	}
}

func raced(err error) bool { return apierrors.IsConflict(err) || apierrors.IsAlreadyExists(err) }

// write saves the job's series in its ConfigMap, created owned by the job (the garbage
// collector deletes it with the job). A ConfigMap of that name that is not the UI's is never
// touched: the error names it. A series with no points (its job's curves made room for a running
// job's) is not written: the ConfigMap keeps the curve saved before.
func (p *persister) write(ctx context.Context, tj *trainer.TrainJob) error {
	if p.history.Len(tj.UID) == 0 {
		return nil
	}
	data, err := p.history.Encode(tj.UID)
	if err != nil {
		return err
	}
	key := client.ObjectKey{Namespace: tj.Namespace, Name: tj.Name + historySuffix}
	cm := &corev1.ConfigMap{}
	err = p.client.Get(ctx, key, cm)
	switch {
	case apierrors.IsNotFound(err):
		cm = &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{
				Namespace: key.Namespace, Name: key.Name,
				Labels: map[string]string{HistoryLabel: "true"},
				OwnerReferences: []metav1.OwnerReference{{
					APIVersion: trainer.GroupVersion.String(), Kind: trainer.TrainJobKind, Name: tj.Name, UID: tj.UID,
					Controller: ptr.To(true),
				}},
			},
			BinaryData: map[string][]byte{historyKey: data},
		}
		return p.client.Create(ctx, cm, client.FieldOwner(historyFieldMgr))
	case err != nil:
		return err
	}
	if owner := metav1.GetControllerOf(cm); cm.Labels[HistoryLabel] != "true" || owner == nil || owner.UID != tj.UID {
		return fmt.Errorf("ConfigMap %s/%s exists and is not the UI's progress history of this job: left alone", key.Namespace, key.Name)
	}
	cm.BinaryData = map[string][]byte{historyKey: data}
	return p.client.Update(ctx, cm, client.FieldOwner(historyFieldMgr))
}
