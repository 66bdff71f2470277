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
	"sync"
	"time"
)

// Report limits. The SDK reports at most every 5 s per process; a TrainJob may report once a
// second after a burst of 10 (room for a few reporting ranks, and for a client that sends a few
// reports back to back), and only the newest report matters anyway. A report waits up to 2 s for
// its turn, so one client reporting back to back is slowed, not refused; beyond that it is
// answered 429 at once rather than held on a connection.
const (
	perTrainJobRate  = 1.0
	perTrainJobBurst = 10
	maxWait          = 2 * time.Second
	// maxTrackedTrainJobs bounds the buckets kept. A bucket that has refilled is the same as none,
	// so those are dropped first; tokens for any name can be minted in one's own namespace, so
	// when every bucket is busy all are dropped rather than the map growing.
	maxTrackedTrainJobs = 10_000
)

// bucket is a token bucket whose tokens go below zero for reports waiting their turn.
type bucket struct {
	rate   float64 // tokens a second
	burst  float64
	tokens float64
	last   time.Time
}

func newBucket(rate float64, burst int, now time.Time) *bucket {
	return &bucket{rate: rate, burst: float64(burst), tokens: float64(burst), last: now}
}

// reserve takes a token at now and returns how long the caller waits for it. When that would be
// longer than maxWait it takes none, and returns the wait anyway, for Retry-After.
func (b *bucket) reserve(now time.Time, maxWait time.Duration) (time.Duration, bool) {
	b.refill(now)
	left := b.tokens - 1
	wait := time.Duration(0)
	if left < 0 {
		wait = time.Duration(-left / b.rate * float64(time.Second))
	}
	if wait > maxWait {
		return wait, false
	}
	b.tokens = left
	return wait, true
}

func (b *bucket) refill(now time.Time) {
	if now.After(b.last) {
		b.tokens = min(b.burst, b.tokens+now.Sub(b.last).Seconds()*b.rate)
		b.last = now
	}
}

// full reports whether the bucket has refilled by now.
func (b *bucket) full(now time.Time) bool {
	b.refill(now)
	return b.tokens >= b.burst
}

// limiter is a bucket per key (a TrainJob), at most max of them.
type limiter struct {
	rate    float64
	burst   int
	max     int
	maxWait time.Duration

	mu      sync.Mutex
	buckets map[string]*bucket
}

func newLimiter(rate float64, burst, max int, maxWait time.Duration) *limiter {
	return &limiter{rate: rate, burst: burst, max: max, maxWait: maxWait, buckets: map[string]*bucket{}}
}

// reserve takes a token of key's bucket: see bucket.reserve.
func (l *limiter) reserve(key string, now time.Time) (time.Duration, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	b := l.buckets[key]
	if b == nil {
		if len(l.buckets) >= l.max {
			l.evict(now)
		}
		b = newBucket(l.rate, l.burst, now)
		l.buckets[key] = b
	}
	return b.reserve(now, l.maxWait)
}

func (l *limiter) evict(now time.Time) {
	for k, b := range l.buckets {
		if b.full(now) {
			delete(l.buckets, k)
		}
	}
	if len(l.buckets) >= l.max {
		clear(l.buckets)
	}
}

// sharedLimiter is one bucket for every report: the write budget of the server's API client.
// A nil one allows everything.
type sharedLimiter struct {
	mu      sync.Mutex
	b       *bucket
	maxWait time.Duration
}

func newSharedLimiter(rate float64, burst int, maxWait time.Duration, now time.Time) *sharedLimiter {
	if rate <= 0 || burst <= 0 {
		return nil
	}
	return &sharedLimiter{b: newBucket(rate, burst, now), maxWait: maxWait}
}

func (s *sharedLimiter) reserve(now time.Time) (time.Duration, bool) {
	if s == nil {
		return 0, true
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.reserve(now, s.maxWait)
}
