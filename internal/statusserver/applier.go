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

package statusserver

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
)

// FieldManager owns status.trainerStatus; the controller never writes it.
const FieldManager = "trainer-status"

// ClientApplier writes status.trainerStatus with server-side apply on the status subresource,
// forcing ownership. Each apply replaces trainerStatus as a whole: the fields a report leaves out
// are removed, and the metrics list is atomic.
type ClientApplier struct {
	Client client.Client
	// Reader reads the TrainJob a token is checked against: the manager's cache, so that a
	// report costs one API call. Nil: Client.
	Reader client.Reader
}

var _ StatusApplier = (*ClientApplier)(nil)

// StaleTokenError refuses a token issued before the TrainJob it names was created. The audience
// names the TrainJob, not its UID (the Kubeflow contract fixes it), so a token projected into a
// pod of a deleted TrainJob stays valid, for up to its hour, for a new TrainJob of the same name:
// its issue time tells them apart, since every token of the new TrainJob's pods is issued after
// the TrainJob was created.
type StaleTokenError struct {
	Namespace, Name string
	UID             types.UID
}

func (e *StaleTokenError) Error() string {
	return fmt.Sprintf("the token was issued before TrainJob %s/%s (uid %s) was created: it belongs to an earlier TrainJob of that name",
		e.Namespace, e.Name, e.UID)
}

// ApplyTrainerStatus applies status to the TrainJob namespace/name, if it was created no later
// than issuedAt (both are whole seconds).
func (a *ClientApplier) ApplyTrainerStatus(ctx context.Context, namespace, name string, issuedAt time.Time, status *trainer.TrainJobTrainerStatus) error {
	var reader client.Reader = a.Client
	if a.Reader != nil {
		reader = a.Reader
	}
	tj := &trainer.TrainJob{}
	if err := reader.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, tj); err != nil {
		return err
	}
	if issuedAt.Before(tj.CreationTimestamp.Time) {
		return &StaleTokenError{Namespace: namespace, Name: name, UID: tj.UID}
	}
	// Through JSON, so what is applied is exactly what the wire format holds (omitzero included).
	data, err := json.Marshal(status)
	if err != nil {
		return fmt.Errorf("encoding trainerStatus: %w", err)
	}
	ts := map[string]any{}
	if err := json.Unmarshal(data, &ts); err != nil {
		return fmt.Errorf("decoding trainerStatus: %w", err)
	}
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": trainer.GroupVersion.String(),
		"kind":       trainer.TrainJobKind,
		"metadata":   map[string]any{"namespace": namespace, "name": name},
		"status":     map[string]any{"trainerStatus": ts},
	}}
	return a.Client.Status().Apply(ctx, client.ApplyConfigurationFromUnstructured(u), client.FieldOwner(FieldManager), client.ForceOwnership)
}
