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
	"sync"
	"time"
)

// Debounce gathers the changes of a burst (a JobSet starting 64 pods) into one update of each
// open page, as KueueViz does.
const Debounce = 200 * time.Millisecond

// Change says which job (or, with an empty Name, which namespace) changed.
type Change struct {
	Namespace string
	Name      string
	Topic     string
}

// Broker fans changes out to the live streams of open pages.
type Broker struct {
	mu   sync.Mutex
	subs map[*Subscription]struct{}
}

// NewBroker returns a broker without subscribers.
func NewBroker() *Broker { return &Broker{subs: map[*Subscription]struct{}{}} }

// Subscription receives a tick at most every Debounce after a change its filter accepts.
type Subscription struct {
	C      <-chan struct{}
	c      chan struct{}
	accept func(Change) bool
	broker *Broker

	mu    sync.Mutex
	timer *time.Timer
}

// Subscribe returns a subscription to the changes accept takes.
func (b *Broker) Subscribe(accept func(Change) bool) *Subscription {
	c := make(chan struct{}, 1)
	s := &Subscription{C: c, c: c, accept: accept, broker: b}
	b.mu.Lock()
	b.subs[s] = struct{}{}
	b.mu.Unlock()
	return s
}

// Close ends a subscription.
func (s *Subscription) Close() {
	s.broker.mu.Lock()
	delete(s.broker.subs, s)
	s.broker.mu.Unlock()
	s.mu.Lock()
	if s.timer != nil {
		s.timer.Stop()
	}
	s.mu.Unlock()
}

// Notify passes a change to the subscriptions that accept it.
func (b *Broker) Notify(ch Change) {
	b.mu.Lock()
	subs := make([]*Subscription, 0, len(b.subs))
	for s := range b.subs {
		subs = append(subs, s)
	}
	b.mu.Unlock()
	for _, s := range subs {
		if s.accept == nil || s.accept(ch) {
			s.poke()
		}
	}
}

// poke schedules one tick Debounce from the first change of a burst.
func (s *Subscription) poke() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.timer != nil {
		return
	}
	s.timer = time.AfterFunc(Debounce, func() {
		s.mu.Lock()
		s.timer = nil
		s.mu.Unlock()
		select {
		case s.c <- struct{}{}:
		default:
		}
	})
}
