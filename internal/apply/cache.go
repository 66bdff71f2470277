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
	"strconv"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// appliedCache remembers, per object, the intent this process last wrote and the version of the
// object that write produced, as cluster-api's server-side apply cache does: when the object is
// still at that version and the intent is the same, writing again would change nothing. It lives
// in memory: after a restart every intent is unknown, and upToDate decides from the object alone.
type appliedCache struct {
	mu      sync.Mutex
	entries map[objectKey]appliedEntry
	byOwner map[types.UID]map[objectKey]struct{}
}

type objectKey struct {
	kind, namespace, name string
}

type appliedEntry struct {
	uid, owner types.UID
	version    string
	hash       string
}

func newAppliedCache() *appliedCache {
	return &appliedCache{entries: map[objectKey]appliedEntry{}, byOwner: map[types.UID]map[objectKey]struct{}{}}
}

func keyOf(obj client.Object) objectKey {
	return objectKey{kind: obj.GetObjectKind().GroupVersionKind().Kind, namespace: obj.GetNamespace(), name: obj.GetName()}
}

// versionOf is what changes when someone else changes obj in a way that matters: the generation
// of objects with a spec (a status update does not count), the resourceVersion of the others.
func versionOf(obj client.Object) string {
	if g := obj.GetGeneration(); g > 0 {
		return "g" + strconv.FormatInt(g, 10)
	}
	return "rv" + obj.GetResourceVersion()
}

// record remembers that obj, as stored after a write (or found identical), holds intent hash.
func (c *appliedCache) record(obj client.Object, hash string) {
	var owner types.UID
	if ref := metav1.GetControllerOf(obj); ref != nil {
		owner = ref.UID
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	key := keyOf(obj)
	c.entries[key] = appliedEntry{uid: obj.GetUID(), owner: owner, version: versionOf(obj), hash: hash}
	if c.byOwner[owner] == nil {
		c.byOwner[owner] = map[objectKey]struct{}{}
	}
	c.byOwner[owner][key] = struct{}{}
}

// matches reports whether existing is the very object and version a write of intent hash left.
func (c *appliedCache) matches(existing client.Object, hash string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[keyOf(existing)]
	return ok && e.uid == existing.GetUID() && e.version == versionOf(existing) && e.hash == hash
}

// forgetOwner drops the entries of the objects owner controls.
func (c *appliedCache) forgetOwner(owner types.UID) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for k := range c.byOwner[owner] {
		if c.entries[k].owner == owner {
			delete(c.entries, k)
		}
	}
	delete(c.byOwner, owner)
}
