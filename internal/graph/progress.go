package graph

import (
	"context"
	"sync"
)

// Progress is where a long read of the whole database (check) is: the part
// running and how far into it. A check of ten million citations runs for
// tens of minutes; a command started in the background says where it is
// with these.
type Progress struct {
	Part  string // "dictionary", "index spo", "view of policy default@1: citations", ...
	Unit  string // what Done and Total count: "terms", "tuples", "citations", "rows"
	Done  int64
	Total int64 // 0 when not known
}

// progressEvery is how many units a part reads between two reports. A
// variable so that tests see the reports between a part's first and last.
var progressEvery int64 = 1 << 16

type progressKey struct{}

// progressSink serializes the reports of a context's reads, which may
// come from several goroutines (the view check's workers).
type progressSink struct {
	mu sync.Mutex
	fn func(Progress)
}

// WithProgress returns a context whose long reads (Store.Check, and the
// view and record checks of package citestore) report to fn: when a part
// starts, every few tens of thousands of units, and when it ends. Calls to
// fn are made one at a time, on the reading goroutines: fn must be quick.
func WithProgress(ctx context.Context, fn func(Progress)) context.Context {
	if fn == nil {
		return ctx
	}
	return context.WithValue(ctx, progressKey{}, &progressSink{fn: fn})
}

// ReportProgress reports p to the function WithProgress gave ctx, if any.
func ReportProgress(ctx context.Context, p Progress) {
	s, _ := ctx.Value(progressKey{}).(*progressSink)
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.fn(p)
}

// HasProgress reports whether ctx has a progress function, so that a
// caller can skip the work of counting for nobody.
func HasProgress(ctx context.Context) bool {
	_, ok := ctx.Value(progressKey{}).(*progressSink)
	return ok
}
