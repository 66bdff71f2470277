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

package cert

import (
	"bytes"
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
)

// CAKey is the key of the CA in the webhook certificate Secret.
const CAKey = "ca.crt"

// ErrCAMissing is wrapped by CA when the Secret or its CA does not exist (as opposed to an error
// reading it): with certManagement off and no certificate provided, for instance.
var ErrCAMissing = errors.New("no status server CA")

// missingCA is an error that says what is missing and matches ErrCAMissing.
type missingCA string

func (e missingCA) Error() string        { return string(e) }
func (e missingCA) Is(target error) bool { return target == ErrCAMissing }

// CABundle reads the CA of the webhook certificate Secret, which training pods trust for the
// status server, through a cache of its own that holds only that Secret: the manager's Secret
// cache holds only what Gantry creates for TrainJobs, and a read per reconcile from the
// apiserver would cost one request per build.
type CABundle struct {
	cache  cache.Cache
	reader client.Reader
	key    types.NamespacedName
}

// NewCABundle returns a CABundle over the Secret key. Add Cache() to the manager.
func NewCABundle(cfg *rest.Config, scheme *runtime.Scheme, mapper meta.RESTMapper, key types.NamespacedName) (*CABundle, error) {
	c, err := cache.New(cfg, cache.Options{
		Scheme:               scheme,
		Mapper:               mapper,
		DefaultNamespaces:    map[string]cache.Config{key.Namespace: {}},
		DefaultFieldSelector: fields.OneTermEqualSelector("metadata.name", key.Name),
	})
	if err != nil {
		return nil, fmt.Errorf("creating the cache of the webhook certificate Secret: %w", err)
	}
	return &CABundle{cache: c, reader: c, key: key}, nil
}

// Cache is the cache holding the Secret; it is a manager Runnable and a watch source.
func (b *CABundle) Cache() cache.Cache {
	return b.cache
}

// CA returns the PEM CA, or an error naming the Secret when it or its ca.crt is missing.
func (b *CABundle) CA(ctx context.Context) (string, error) {
	secret := &corev1.Secret{}
	if err := b.reader.Get(ctx, b.key, secret); err != nil {
		if apierrors.IsNotFound(err) {
			return "", missingCA(fmt.Sprintf("the webhook certificate Secret %s does not exist; the status server's CA is copied from its %s", b.key, CAKey))
		}
		return "", fmt.Errorf("reading the webhook certificate Secret %s: %w", b.key, err)
	}
	ca := secret.Data[CAKey]
	if len(bytes.TrimSpace(ca)) == 0 {
		return "", missingCA(fmt.Sprintf("the webhook certificate Secret %s has no %s; the status server's CA is copied from it", b.key, CAKey))
	}
	return string(ca), nil
}

// CAChanged passes the events after which the CA a TrainJob would copy is different: the Secret
// appearing, disappearing or getting another ca.crt. A serving certificate renewed under the
// same CA changes nothing for the pods.
func CAChanged() predicate.TypedPredicate[*corev1.Secret] {
	return predicate.TypedFuncs[*corev1.Secret]{
		UpdateFunc: func(e event.TypedUpdateEvent[*corev1.Secret]) bool {
			return !bytes.Equal(e.ObjectOld.Data[CAKey], e.ObjectNew.Data[CAKey])
		},
		GenericFunc: func(event.TypedGenericEvent[*corev1.Secret]) bool { return false },
	}
}
