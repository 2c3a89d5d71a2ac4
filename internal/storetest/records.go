package storetest

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/provgraph/provgraph/internal/query"
)

// RecordStoreContract is what every query.RecordStore must do (MemRecords
// in memory, citestore.Records beside a grouping view): newStore returns
// an empty one. Writes are followed by reads in every order, so a store
// that buffers its writes must show them to its reads. After each step the
// store is compared with a model kept here: every record by id, the id of
// every key, the queue read whole and a page of two at a time, and the
// counts by verdict.
func RecordStoreContract(t *testing.T, newStore func(t *testing.T) query.RecordStore) {
	ctx := context.Background()
	rec := func(id string, keys []string, members int, verdict string, queued, review bool) *query.GroupRecord {
		return &query.GroupRecord{ID: id, Key: keys[0], Keys: keys, Members: members, Verdict: verdict, Queued: queued, ReviewRelation: review}
	}
	type step struct {
		put *query.GroupRecord
		del string
	}
	steps := []step{
		{put: rec("g-b", []string{"https://b.test/", "https://b.test/x"}, 2, "duplicate", true, false)},
		{put: rec("g-a", []string{"https://a.test/"}, 1, "distinct", false, false)},
		{put: rec("g-c", []string{"https://c.test/", "https://c.test/y", "https://c.test/z"}, 3, "near-duplicate", true, true)},
		{put: rec("g-d", []string{"https://d.test/"}, 1, "distinct", true, true)},
		{put: rec("g-e", []string{"https://aa.test/"}, 2, "duplicate", true, false)},
		// Replacing: keys, verdict and queue place change; a key moves.
		{put: rec("g-b", []string{"https://b.test/", "https://b.test/w"}, 2, "near-duplicate", true, false)},
		{put: rec("g-c", []string{"https://c.test/", "https://c.test/y"}, 2, "duplicate", false, false)},
		{put: rec("g-f", []string{"https://c.test/z"}, 1, "distinct", false, false)},
		{del: "g-d"},
		{del: "g-nothing"},
		{put: rec("g-d", []string{"https://d.test/", "https://d.test/q"}, 2, "duplicate", true, false)},
		{del: "g-a"},
		{put: rec("g-e", []string{"https://aa.test/"}, 2, "duplicate", false, false)},
	}
	rs := newStore(t)
	model := map[string]*query.GroupRecord{}
	compare := func(i int) {
		t.Helper()
		where := fmt.Sprintf("after step %d", i)
		keyOf := map[string]string{}
		for id, r := range model {
			got, ok, err := rs.Record(ctx, id)
			if err != nil || !ok {
				t.Fatalf("%s: Record(%s) = %v, %v, want it", where, id, ok, err)
			}
			if fmt.Sprint(*got) != fmt.Sprint(*r) {
				t.Errorf("%s: Record(%s) = %+v, want %+v", where, id, *got, *r)
			}
			for _, k := range r.Keys {
				keyOf[k] = id
			}
		}
		for _, id := range []string{"g-a", "g-d", "g-nothing"} {
			if _, ok, err := rs.Record(ctx, id); err != nil || ok != (model[id] != nil) {
				t.Errorf("%s: Record(%s) found %v (%v), want %v", where, id, ok, err, model[id] != nil)
			}
		}
		for _, k := range []string{"https://a.test/", "https://b.test/", "https://b.test/x", "https://b.test/w", "https://c.test/z", "https://d.test/q", "https://none.test/"} {
			id, ok, err := rs.IDOfKey(ctx, k)
			if err != nil || id != keyOf[k] || ok != (keyOf[k] != "") {
				t.Errorf("%s: IDOfKey(%s) = %q, %v, %v, want %q", where, k, id, ok, err, keyOf[k])
			}
		}
		var want []string
		for _, id := range slices.Sorted(maps.Keys(model)) {
			if model[id].Queued {
				want = append(want, id)
			}
		}
		slices.SortFunc(want, func(a, b string) int { return strings.Compare(model[a].Key, model[b].Key) })
		var whole []string
		all, err := rs.Queue(ctx, "", 0)
		if err != nil {
			t.Fatalf("%s: Queue: %v", where, err)
		}
		for _, r := range all {
			whole = append(whole, r.ID)
		}
		var paged []string
		after := ""
		for {
			page, err := rs.Queue(ctx, after, 2)
			if err != nil {
				t.Fatalf("%s: Queue(%q, 2): %v", where, after, err)
			}
			if len(page) == 0 {
				break
			}
			if len(page) > 2 {
				t.Fatalf("%s: Queue(%q, 2) gave %d records", where, after, len(page))
			}
			for _, r := range page {
				paged = append(paged, r.ID)
			}
			after = page[len(page)-1].ID
		}
		if !slices.Equal(whole, want) || !slices.Equal(paged, want) {
			t.Errorf("%s: queue %v, in pages %v, want %v", where, whole, paged, want)
		}
		wantCounts := map[string]int{"groups": len(model)}
		for _, r := range model {
			wantCounts["verdict:"+r.Verdict]++
		}
		got, err := rs.Counts(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for k, n := range got {
			if n == 0 {
				delete(got, k) // a verdict no record has any more may be kept at 0
			}
		}
		if wantCounts["groups"] == 0 {
			delete(wantCounts, "groups")
		}
		if !maps.Equal(got, wantCounts) {
			t.Errorf("%s: counts %v, want %v", where, got, wantCounts)
		}
	}
	compare(-1)
	for i, s := range steps {
		if s.put != nil {
			r := *s.put
			r.Keys = slices.Clone(r.Keys)
			if err := rs.Put(ctx, &r); err != nil {
				t.Fatalf("step %d: Put: %v", i, err)
			}
			// A moved key belongs to its new record alone.
			for id, o := range model {
				if id != r.ID {
					o2 := *o
					o2.Keys = slices.DeleteFunc(slices.Clone(o.Keys), func(k string) bool { return slices.Contains(r.Keys, k) })
					if len(o2.Keys) != len(o.Keys) {
						t.Fatalf("step %d: the contract's steps move a key only by replacing its record", i)
					}
				}
			}
			model[r.ID] = s.put
		} else {
			if err := rs.Delete(ctx, s.del); err != nil {
				t.Fatalf("step %d: Delete: %v", i, err)
			}
			delete(model, s.del)
		}
		compare(i)
	}
	// A page after an id that is not queued is an error wrapping
	// query.ErrNoGroup.
	for _, id := range []string{"g-c", "g-nothing"} {
		if _, err := rs.Queue(ctx, id, 2); !errors.Is(err, query.ErrNoGroup) {
			t.Errorf("Queue after %s (not queued): %v, want query.ErrNoGroup", id, err)
		}
	}
}
