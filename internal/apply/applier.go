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

package apply

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Applier writes the Desired objects of an owner (a TrainJob). It reads what exists from the
// manager's cache, and from the API server where the cache cannot see (ConfigMaps and Secrets
// are cached only when they carry Gantry's label, so a foreign one of the same name is
// invisible there).
type Applier struct {
	client     client.Client
	apiReader  client.Reader
	fieldOwner string
	applied    *appliedCache
}

// NewApplier returns an Applier that writes through c (reading the cache) as fieldOwner, and
// reads uncached through apiReader.
func NewApplier(c client.Client, apiReader client.Reader, fieldOwner string) (*Applier, error) {
	if c == nil || apiReader == nil || fieldOwner == "" {
		return nil, errors.New("apply.NewApplier: nil dependency")
	}
	return &Applier{client: c, apiReader: apiReader, fieldOwner: fieldOwner, applied: newAppliedCache()}, nil
}

// Result says what Apply did.
type Result struct {
	// Created are the objects that did not exist before this call.
	Created []client.Object
}

// NotOwnedError is returned for an object that exists under the name Gantry would write but is
// not controlled by the owner: Gantry never adopts objects it did not create, since deleting the
// TrainJob would then delete someone else's object, and a Secret found that way would be mounted
// into the training pods as it is.
type NotOwnedError struct {
	Kind, Namespace, Name, Owner string
}

func (e *NotOwnedError) Error() string {
	return fmt.Sprintf("%s %s/%s exists and is not owned by this TrainJob (%s): Gantry does not adopt objects it did not create; delete or rename it",
		e.Kind, e.Namespace, e.Name, e.Owner)
}

// GoneError is returned for an update of an object that was deleted since it was read: with a
// forced apply and no resourceVersion, the API server's only conflict is that the object of that
// UID no longer exists. The object is not created again; the caller decides what its absence means.
type GoneError struct {
	Kind, Namespace, Name string
	UID                   types.UID
	err                   error
}

func (e *GoneError) Error() string {
	return fmt.Sprintf("%s %s/%s (uid %s) was deleted while Gantry updated it: %v", e.Kind, e.Namespace, e.Name, e.UID, e.err)
}

func (e *GoneError) Unwrap() error { return e.err }

// Apply writes objs for owner, in order, each as its Mode says, and only what would change
// something: an object is skipped when this exact intent was already applied to it and nothing
// changed it since, so a field Gantry stops setting is removed by the next write instead of
// staying forever. suspended is the owner's spec.suspend.
func (a *Applier) Apply(ctx context.Context, owner client.Object, suspended bool, objs []Desired) (Result, error) {
	var res Result
	for _, d := range objs {
		created, err := a.applyOne(ctx, owner, suspended, d)
		if err != nil {
			return res, err
		}
		if created {
			res.Created = append(res.Created, d.Object)
		}
	}
	return res, nil
}

func (a *Applier) applyOne(ctx context.Context, owner client.Object, suspended bool, d Desired) (bool, error) {
	if d.Mode == Shared {
		return false, fmt.Errorf("%s is shared by the namespace: it is published, not applied for one TrainJob", describe(d.Object))
	}
	// Writes of typed objects clear their TypeMeta; errors and comparisons need the kind.
	gvk := d.Object.GetObjectKind().GroupVersionKind()
	defer d.Object.GetObjectKind().SetGroupVersionKind(gvk)
	existing, err := a.get(ctx, a.client, d.Object)
	if err != nil {
		return false, err
	}
	if existing == nil {
		if d.ExistingUID != "" {
			// The caller saw it: an update of that object, not a create (write sends the UID).
			return false, a.write(ctx, d, nil)
		}
		if createdFirst(d) {
			return a.create(ctx, owner, suspended, d)
		}
		return true, a.write(ctx, d, nil)
	}
	return false, a.update(ctx, owner, suspended, d, existing)
}

// createdFirst says whether an absent object is written with a create, not an apply: create-once
// objects (never overwritten, even by a write the cache did not see yet), and ConfigMaps and
// Secrets, whose cache cannot see a foreign object of the same name; the create then fails
// instead of adopting it. Their content is Gantry's whole, so they are updated, not applied
// (replaceContent). JobSets and PodGroups are created by apply, so later applies can remove every
// field they were created with.
func createdFirst(d Desired) bool {
	return d.Mode == IfAbsent || isConfigMapOrSecret(d.Object)
}

func (a *Applier) create(ctx context.Context, owner client.Object, suspended bool, d Desired) (bool, error) {
	if d.Complete != nil {
		if err := d.Complete(); err != nil {
			return false, err
		}
	}
	obj := d.Object
	_, hash, err := intent(obj)
	if err != nil {
		return false, err
	}
	gvk := obj.GetObjectKind().GroupVersionKind()
	err = a.client.Create(ctx, obj, client.FieldOwner(a.fieldOwner))
	obj.GetObjectKind().SetGroupVersionKind(gvk)
	if err == nil {
		a.applied.record(obj, hash)
		return true, nil
	}
	if !apierrors.IsAlreadyExists(err) {
		return false, fmt.Errorf("creating %s: %w", describe(obj), err)
	}
	// Created by an earlier reconcile the cache has not seen yet, or by someone else.
	existing, err := a.get(ctx, a.apiReader, obj)
	if err != nil || existing == nil {
		return false, err
	}
	return false, a.update(ctx, owner, suspended, d, existing)
}

func (a *Applier) update(ctx context.Context, owner client.Object, suspended bool, d Desired, existing client.Object) error {
	if !metav1.IsControlledBy(existing, owner) {
		return &NotOwnedError{Kind: kindOf(d.Object), Namespace: existing.GetNamespace(), Name: existing.GetName(), Owner: owner.GetName()}
	}
	if d.Accept != nil {
		if err := d.Accept(existing); err != nil {
			return err
		}
	}
	if !Writable(d.Mode, suspended, existing) {
		return nil
	}
	if a.upToDate(d.Object, existing) {
		return nil
	}
	if isConfigMapOrSecret(d.Object) {
		return a.replaceContent(ctx, d.Object, existing)
	}
	return a.write(ctx, d, existing)
}

// replaceContent updates a ConfigMap or Secret to hold exactly the desired content (a key Gantry
// stopped writing goes) and the desired labels, annotations and owner, keeping what others added
// to the metadata. The resourceVersion of existing makes a concurrent change fail the update
// instead of being overwritten.
func (a *Applier) replaceContent(ctx context.Context, desired, existing client.Object) error {
	want, hash, err := intent(desired)
	if err != nil {
		return err
	}
	have, err := ToUnstructured(existing)
	if err != nil {
		return err
	}
	for _, k := range contentKeys {
		if v, ok := want[k]; ok {
			have[k] = v
		} else {
			delete(have, k)
		}
	}
	meta, _ := have["metadata"].(map[string]any)
	wantMeta, _ := want["metadata"].(map[string]any)
	for _, k := range []string{"labels", "annotations"} {
		merged, _ := meta[k].(map[string]any)
		if merged == nil {
			merged = map[string]any{}
		}
		add, _ := wantMeta[k].(map[string]any)
		maps.Copy(merged, add)
		if len(merged) > 0 {
			meta[k] = merged
		}
	}
	meta["ownerReferences"] = wantMeta["ownerReferences"]
	obj := &unstructured.Unstructured{Object: have}
	obj.SetGroupVersionKind(desired.GetObjectKind().GroupVersionKind())
	if err := a.client.Update(ctx, obj, client.FieldOwner(a.fieldOwner)); err != nil {
		return fmt.Errorf("updating %s: %w", describe(desired), err)
	}
	a.applied.record(obj, hash)
	return nil
}

// contentKeys are the top-level fields of a ConfigMap or Secret besides its metadata.
var contentKeys = []string{"data", "binaryData", "stringData", "type", "immutable"}

// upToDate reports whether existing holds exactly the intent of desired. Known intents (this
// process applied desired to this very version of existing) only need the cheap check that
// nothing removed one of its fields meanwhile. Unknown ones (after a restart) are trusted only
// for ConfigMaps and Secrets, whose content Gantry owns whole and can compare exactly; anything
// else is applied once more.
func (a *Applier) upToDate(desired, existing client.Object) bool {
	want, hash, err := intent(desired)
	if err != nil {
		return false
	}
	have, err := ToUnstructured(existing)
	if err != nil {
		return false
	}
	if a.applied.matches(existing, hash) {
		return Subset(want, have)
	}
	if !isConfigMapOrSecret(desired) || !sameContent(want, have) {
		return false
	}
	a.applied.record(existing, hash)
	return true
}

// sameContent compares a ConfigMap's or Secret's content exactly (so a key Gantry stopped
// writing counts as a difference) and its metadata as a subset (the apiserver adds to it).
func sameContent(want, have map[string]any) bool {
	for _, k := range contentKeys {
		if !Subset(want[k], have[k]) || !Subset(have[k], want[k]) {
			return false
		}
	}
	return Subset(want["metadata"], have["metadata"])
}

// write server-side applies d with force: Gantry owns every field it sets.
func (a *Applier) write(ctx context.Context, d Desired, existing client.Object) error {
	if existing == nil && d.Complete != nil {
		if err := d.Complete(); err != nil {
			return err
		}
	}
	_, hash, err := intent(d.Object)
	if err != nil {
		return err
	}
	u, err := ToUnstructured(d.Object)
	if err != nil {
		return fmt.Errorf("converting %s: %w", describe(d.Object), err)
	}
	obj := &unstructured.Unstructured{Object: u}
	uid := d.ExistingUID
	if existing != nil {
		uid = existing.GetUID()
	}
	if uid != "" {
		// An update of the object the cache or the caller showed, never a create: the UID makes
		// the API server refuse (409) an apply whose object was deleted since, which would
		// otherwise create it again (a finished or deleted JobSet would run the training again).
		obj.SetUID(uid)
	}
	if err := a.client.Apply(ctx, client.ApplyConfigurationFromUnstructured(obj), client.FieldOwner(a.fieldOwner), client.ForceOwnership); err != nil {
		if uid != "" && apierrors.IsConflict(err) {
			return &GoneError{Kind: kindOf(d.Object), Namespace: obj.GetNamespace(), Name: obj.GetName(), UID: uid, err: err}
		}
		return fmt.Errorf("applying %s: %w", describe(d.Object), err)
	}
	// The apply answer is the object as stored: its UID, resourceVersion and generation.
	a.applied.record(obj, hash)
	return nil
}

// Forget drops what the applier remembers of the objects of owner (when it is finished or gone).
func (a *Applier) Forget(owner client.Object) {
	a.applied.forgetOwner(owner.GetUID())
}

// get reads the object of obj's kind and key through r; nil when it does not exist.
func (a *Applier) get(ctx context.Context, r client.Reader, obj client.Object) (client.Object, error) {
	existing, ok := obj.DeepCopyObject().(client.Object)
	if !ok {
		return nil, fmt.Errorf("%T is not a client.Object", obj)
	}
	err := r.Get(ctx, client.ObjectKeyFromObject(obj), existing)
	switch {
	case apierrors.IsNotFound(err):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("reading %s: %w", describe(obj), err)
	}
	return existing, nil
}

func isConfigMapOrSecret(obj client.Object) bool {
	gvk := obj.GetObjectKind().GroupVersionKind()
	return gvk.Group == "" && (gvk.Kind == "ConfigMap" || gvk.Kind == "Secret")
}

func kindOf(obj client.Object) string {
	return obj.GetObjectKind().GroupVersionKind().Kind
}

func describe(obj client.Object) string {
	return fmt.Sprintf("%s %s/%s", kindOf(obj), obj.GetNamespace(), obj.GetName())
}

// intent is what Gantry asks for in obj, as compared with what exists (typed objects read from
// the cache carry no apiVersion and kind), and its hash.
func intent(obj client.Object) (map[string]any, string, error) {
	u, err := ToUnstructured(obj)
	if err != nil {
		return nil, "", fmt.Errorf("converting %s: %w", describe(obj), err)
	}
	delete(u, "apiVersion")
	delete(u, "kind")
	data, err := json.Marshal(u)
	if err != nil {
		return nil, "", fmt.Errorf("encoding %s: %w", describe(obj), err)
	}
	sum := sha256.Sum256(data)
	return u, hex.EncodeToString(sum[:]), nil
}
