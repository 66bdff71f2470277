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

package kubeauth

import (
	"sync"
	"time"

	"k8s.io/utils/lru"
)

// ttlCache is a bounded LRU whose entries expire.
type ttlCache[V any] struct {
	lru *lru.Cache
}

type ttlEntry[V any] struct {
	v       V
	expires time.Time
}

func newTTLCache[V any](size int) *ttlCache[V] { return &ttlCache[V]{lru: lru.New(size)} }

func (c *ttlCache[V]) get(k string) (V, bool) {
	var zero V
	e, ok := c.lru.Get(k)
	if !ok {
		return zero, false
	}
	ent := e.(ttlEntry[V])
	if time.Now().After(ent.expires) {
		c.lru.Remove(k)
		return zero, false
	}
	return ent.v, true
}

func (c *ttlCache[V]) put(k string, v V, ttl time.Duration) {
	c.lru.Add(k, ttlEntry[V]{v: v, expires: time.Now().Add(ttl)})
}

// rateLimiter allows perIP calls per second per client and total calls per second in all: a
// fixed one-second window is enough to stop TokenReview amplification.
type rateLimiter struct {
	mu           sync.Mutex
	perIP, total int
	window       time.Time
	counts       map[string]int
	all          int
	now          func() time.Time
}

func newRateLimiter(perIP, total int) *rateLimiter {
	return &rateLimiter{perIP: perIP, total: total, counts: map[string]int{}, now: time.Now}
}

func (l *rateLimiter) allow(ip string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now().Truncate(time.Second)
	if !now.Equal(l.window) {
		l.window, l.counts, l.all = now, map[string]int{}, 0
	}
	if l.counts[ip] >= l.perIP || l.all >= l.total {
		return false
	}
	l.counts[ip]++
	l.all++
	return true
}
