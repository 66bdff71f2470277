package webhook

import (
	"context"
	"sync"
)

// warningCollector records the warnings the apiserver returns.
type warningCollector struct {
	mu       sync.Mutex
	messages []string
}

func (w *warningCollector) HandleWarningHeaderWithContext(_ context.Context, _ int, _ string, message string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.messages = append(w.messages, message)
}
