package kube

import (
	"context"
	"sync"
)

type warningsKey struct{}

// warningList collects the API server's warnings for the requests made with
// one context.
type warningList struct {
	mu    sync.Mutex
	texts []string
}

// WithWarnings returns a context whose requests collect the API server's
// warnings (deprecated API versions, unknown fields in Warn mode, ...), and a
// function returning those collected so far, without duplicates.
func WithWarnings(ctx context.Context) (context.Context, func() []string) {
	l := &warningList{}
	return context.WithValue(ctx, warningsKey{}, l), func() []string {
		l.mu.Lock()
		defer l.mu.Unlock()
		return append([]string(nil), l.texts...)
	}
}

// warningCollector is the client's warning handler: it routes each warning to
// the list in the request's context and drops warnings made without one.
type warningCollector struct{}

// HandleWarningHeaderWithContext implements rest.WarningHandlerWithContext.
func (warningCollector) HandleWarningHeaderWithContext(ctx context.Context, code int, _ string, text string) {
	if code != 299 || text == "" {
		return
	}
	l, ok := ctx.Value(warningsKey{}).(*warningList)
	if !ok {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, t := range l.texts {
		if t == text {
			return
		}
	}
	l.texts = append(l.texts, text)
}
