package server

import (
	"errors"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/provgraph/provgraph/internal/service"
)

// TestPageCache: readers of one key in one state share one computation
// (the others wait for it); the next state starts empty; a reader still
// holding an earlier state computes its own value and never replaces the
// newer state's; an error is not kept.
func TestPageCache(t *testing.T) {
	var c pageCache
	s1, s2 := &service.Reviewed{}, &service.Reviewed{}
	cur := s1
	current := func(r *service.Reviewed) bool { return r == cur }
	var calls atomic.Int32
	started, release := make(chan struct{}), make(chan struct{})
	compute := func() (any, error) {
		if calls.Add(1) == 1 {
			close(started)
			<-release
		}
		return "v1", nil
	}
	var wg sync.WaitGroup
	got := make([]any, 8)
	wg.Add(1)
	go func() { defer wg.Done(); got[0], _ = c.get(s1, current, "k", compute) }()
	<-started // the first computation runs; the others must wait for it
	for i := 1; i < len(got); i++ {
		wg.Add(1)
		go func() { defer wg.Done(); got[i], _ = c.get(s1, current, "k", compute) }()
	}
	close(release)
	wg.Wait()
	for i, v := range got {
		if v != "v1" {
			t.Errorf("reader %d got %v, want v1", i, v)
		}
	}
	// The waiting readers may have arrived after the computation ended;
	// either way it ran once.
	if n := calls.Load(); n != 1 {
		t.Errorf("%d computations for one key in one state, want 1", n)
	}
	cur = s2
	if v, _ := c.get(s2, current, "k", func() (any, error) { return "v2", nil }); v != "v2" {
		t.Errorf("next state: %v, want v2 (a new computation)", v)
	}
	if v, _ := c.get(s1, current, "k", func() (any, error) { return "old", nil }); v != "old" {
		t.Errorf("a reader of the earlier state got %v, want its own value", v)
	}
	if v, _ := c.get(s2, current, "k", func() (any, error) { return "v3", nil }); v != "v2" {
		t.Errorf("after a reader of the earlier state: %v, want v2 still cached", v)
	}
	boom := errors.New("boom")
	if _, err := c.get(s2, current, "e", func() (any, error) { return nil, boom }); err != boom {
		t.Errorf("error = %v, want boom", err)
	}
	if v, err := c.get(s2, current, "e", func() (any, error) { return "ok", nil }); v != "ok" || err != nil {
		t.Errorf("after an error: %v %v, want a new computation", v, err)
	}
}
