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
	"fmt"
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

// Review budgets per one-second window. The apiserver sees at most reviewBudget TokenReviews a
// second from one process. A review only counts against its client's address and the failure
// budget until it comes back: one that authenticates gives both back, so users signing in
// through an ingress (one address for all) spend nothing of its address's budget, and only
// failures fill it. One address may fail half the budget, then its new tokens wait for the next
// second (the penalty box); all addresses together may fail three quarters, so the last quarter
// is left to tokens already seen valid, whose cache entries expire every minute.
const (
	reviewBudget  = 200
	failureBudget = reviewBudget * 3 / 4
	addrBudget    = reviewBudget / 2
)

// rateLimiter holds the budgets of the current window: a fixed one-second window is enough to
// stop TokenReview amplification.
type rateLimiter struct {
	mu                  sync.Mutex
	total, fails, perIP int
	window              time.Time
	all, suspect        int
	addrs               map[string]int
	now                 func() time.Time
}

func newRateLimiter(total, fails, perIP int) *rateLimiter {
	return &rateLimiter{total: total, fails: fails, perIP: perIP, addrs: map[string]int{}, now: time.Now}
}

// ticket is one review allowed; done settles it.
type ticket struct {
	window time.Time
	ip     string
	// suspect: the token was not known valid, so the review holds a unit of the failure and
	// address budgets until it authenticates.
	suspect bool
}

// allow admits a review of a token from ip, known when the token authenticated before. The error
// says which budget is spent.
func (l *rateLimiter) allow(ip string, known bool) (ticket, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now().Truncate(time.Second)
	if !now.Equal(l.window) {
		l.window, l.addrs, l.all, l.suspect = now, map[string]int{}, 0, 0
	}
	switch {
	case l.all >= l.total:
		return ticket{}, fmt.Errorf("%w (%d token reviews a second in all)", ErrRateLimited, l.total)
	case known:
		l.all++
		return ticket{window: now, ip: ip}, nil
	case l.addrs[ip] >= l.perIP:
		return ticket{}, fmt.Errorf("%w (%d refused tokens from %s this second)", ErrRateLimited, l.perIP, ip)
	case l.suspect >= l.fails:
		return ticket{}, fmt.Errorf("%w (%d refused tokens a second in all)", ErrRateLimited, l.fails)
	}
	l.all++
	l.suspect++
	l.addrs[ip]++
	return ticket{window: now, ip: ip, suspect: true}, nil
}

// done settles a review: one that authenticated, or that the apiserver could not answer, gives
// back its units of the failure and address budgets.
func (l *rateLimiter) done(t ticket, failed bool) {
	if failed || !t.suspect {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if t.window.Equal(l.window) {
		l.suspect--
		l.addrs[t.ip]--
	}
}
