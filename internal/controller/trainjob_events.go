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

package controller

import (
	corev1 "k8s.io/api/core/v1"
)

// maxEventMessage keeps event messages under the apiserver's limit.
const maxEventMessage = 950

// queuedEvent is one event to emit on the TrainJob once its status is written: an event about a state
// the status does not hold yet would tell the user something the API contradicts.
type queuedEvent struct {
	eventType, reason, message string
}

func (res *phaseResult) event(eventType, reason, message string) {
	res.events = append(res.events, queuedEvent{eventType: eventType, reason: reason, message: message})
}

func (res *phaseResult) warn(reason, message string) {
	res.event(corev1.EventTypeWarning, reason, message)
}

func (r *TrainJobReconciler) emit(s *scope, events []queuedEvent) {
	for _, e := range events {
		r.recorder.Event(s.tj, e.eventType, e.reason, truncate(e.message))
	}
}

func truncate(s string) string {
	if len(s) <= maxEventMessage {
		return s
	}
	return s[:maxEventMessage] + " ..."
}
