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
