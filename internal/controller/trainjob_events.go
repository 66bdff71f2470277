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
	"k8s.io/client-go/tools/record"
)

// maxEventMessage keeps event messages under the apiserver's limit.
const maxEventMessage = 950

// queuedEvent is one event to emit on the TrainJob once its status is written: an event about a state
// the status does not hold yet would tell the user something the API contradicts.
type queuedEvent struct {
	eventType, reason, message string
}

func (s *scope) warn(reason, message string) {
	s.events = append(s.events, queuedEvent{eventType: corev1.EventTypeWarning, reason: reason, message: message})
}

func (s *scope) emit(recorder record.EventRecorder) {
	for _, e := range s.events {
		recorder.Event(s.tj, e.eventType, e.reason, truncate(e.message))
	}
}

func truncate(s string) string {
	if len(s) <= maxEventMessage {
		return s
	}
	return s[:maxEventMessage] + " ..."
}
