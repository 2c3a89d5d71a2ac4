package storetest

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"reflect"
	"slices"
	"testing"

	"github.com/provgraph/provgraph/internal/model"
	"github.com/provgraph/provgraph/internal/normalize"
	"github.com/provgraph/provgraph/internal/store"
)

// testGroupView: a backend's grouping view, appended to in two batches
// (the second under another policy too), answers every read as its own
// scan says (store.ScanViewRows): rows by key and paged in key order,
// and keys by group id, content hash, text digest, SimHash block,
// redirect and relation target.
func testGroupView(t *testing.T, b store.Backend) {
	gv, ok := b.(store.GroupView)
	if !ok {
		t.Skip("the backend keeps no grouping view")
	}
	ctx := context.Background()
	recs := Corpus(t)
	pol := normalize.Default()
	half := len(recs) / 2
	appendAll(t, b, recs[:half]...)
	if _, err := b.Append(ctx, store.Batch{Policy: pol, Records: recs[half:]}); err != nil {
		t.Fatal(err)
	}
	// Citations added under another policy are rows of the first
	// policy's view too, never normalized under it.
	extra := []*model.Record{rec("lenient-only", "HTTPS://Lenient.Example/Only?utm_source=x")}
	if _, err := b.Append(ctx, store.Batch{Policy: normalize.Lenient(), Records: extra}); err != nil {
		t.Fatal(err)
	}
	d := pol.Digest()
	if has, err := gv.HasView(ctx, d); err != nil || !has {
		t.Fatalf("HasView(%s) = %v, %v; want true for the policy of the first batch", d, has, err)
	}
	if has, err := gv.HasView(ctx, "sha256:none"); err != nil || has {
		t.Errorf("HasView(a policy not stored) = %v, %v; want false", has, err)
	}
	if _, err := gv.KeyRows(ctx, "sha256:none", "x"); !errors.Is(err, store.ErrNoView) {
		t.Errorf("KeyRows(a policy not stored) error = %v, want ErrNoView", err)
	}
	var want []store.ViewRow
	if err := store.ScanViewRows(ctx, b, d, func(r store.ViewRow) error {
		want = append(want, r)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if len(want) != len(recs)+len(extra) {
		t.Fatalf("the scan gives %d rows, want %d", len(want), len(recs)+len(extra))
	}
	slices.SortFunc(want, func(a, b store.ViewRow) int {
		return cmp.Or(cmp.Compare(a.Key, b.Key), cmp.Compare(a.CitationID, b.CitationID))
	})

	// Every row, a page of 3 at a time.
	var got []store.ViewRow
	var after *store.RowPos
	for {
		page, err := gv.RowsAfter(ctx, d, after, 3)
		if err != nil {
			t.Fatal(err)
		}
		if len(page) == 0 {
			break
		}
		if len(page) > 3 {
			t.Fatalf("RowsAfter(limit 3) gave %d rows", len(page))
		}
		got = append(got, page...)
		last := page[len(page)-1]
		after = &store.RowPos{Key: last.Key, CitationID: last.CitationID}
	}
	if !reflect.DeepEqual(norm(got), norm(want)) {
		t.Errorf("RowsAfter, page by page:\n%+v\nwant the scan's rows:\n%+v", got, want)
	}

	keyOf := ViewKeyOf(policyRef(t, b, d))
	keys := map[string][]store.ViewRow{}
	type posting struct{ kind, value string }
	postings := map[posting][]string{}
	for _, r := range want {
		if r.State != store.RowKeyed {
			continue
		}
		keys[r.Key] = append(keys[r.Key], r)
		sum := sha256.Sum256([]byte(r.Key))
		postings[posting{"id", "g-" + hex.EncodeToString(sum[:6])}] = append(postings[posting{"id", "g-" + hex.EncodeToString(sum[:6])}], r.Key)
		for _, e := range r.Evidence {
			if e.Content != "" {
				postings[posting{"content", e.Content}] = append(postings[posting{"content", e.Content}], r.Key)
			}
			if e.Digest != "" {
				postings[posting{"digest", e.Digest}] = append(postings[posting{"digest", e.Digest}], r.Key)
			}
		}
		for _, u := range r.Redirects {
			if k := keyOf(u); k != "" && k != r.Key {
				postings[posting{"redirect", k}] = append(postings[posting{"redirect", k}], r.Key)
			}
		}
		for _, u := range r.Links {
			if k := keyOf(u); k != "" && k != r.Key {
				postings[posting{"relation", k}] = append(postings[posting{"relation", k}], r.Key)
			}
		}
	}
	if len(keys) == 0 || len(postings) == 0 {
		t.Fatal("the corpus gives no keyed row or no posting")
	}
	for key, rows := range keys {
		got, err := gv.KeyRows(ctx, d, key)
		if err != nil || !reflect.DeepEqual(norm(got), norm(rows)) {
			t.Errorf("KeyRows(%q) = %+v, %v; want %+v", key, got, err, rows)
		}
	}
	kinds := map[string]int{}
	for p, want := range postings {
		var got []string
		var err error
		switch p.kind {
		case "id":
			got, err = gv.KeysOfID(ctx, d, p.value)
		case "content":
			got, err = gv.KeysByContent(ctx, d, p.value)
		case "digest":
			got, err = gv.KeysByDigest(ctx, d, p.value)
		case "redirect":
			got, err = gv.RedirectSources(ctx, d, p.value)
		case "relation":
			got, err = gv.RelationSources(ctx, d, p.value)
		}
		kinds[p.kind]++
		if want = found(want); err != nil || !slices.Equal(got, want) {
			t.Errorf("%s posting %q: keys %q, %v; want %q", p.kind, p.value, got, err, want)
		}
	}
	for _, k := range []string{"id", "content", "redirect", "relation"} {
		if kinds[k] == 0 {
			t.Errorf("the corpus gives no %s posting to test", k)
		}
	}
	if got, err := gv.KeysByContent(ctx, d, "sha256:not-stored"); err != nil || got != nil {
		t.Errorf("KeysByContent(a hash not stored) = %q, %v; want nil", got, err)
	}
	if got, err := gv.KeysBySimBlock(ctx, d, 2, 0xbeef); err != nil || got != nil {
		t.Errorf("KeysBySimBlock without extractions = %q, %v; want nil", got, err)
	}
}

// norm makes nil and empty lists alike, for comparing rows.
func norm(rows []store.ViewRow) []store.ViewRow {
	out := slices.Clone(rows)
	for i := range out {
		r := &out[i]
		if len(r.Redirects) == 0 {
			r.Redirects = nil
		}
		if len(r.Links) == 0 {
			r.Links = nil
		}
		if len(r.Evidence) == 0 {
			r.Evidence = nil
		}
	}
	return out
}

func policyRef(t *testing.T, b store.Catalog, d string) store.PolicyRef {
	t.Helper()
	pols, err := b.StoredPolicies(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pols {
		if p.Digest == d {
			return p
		}
	}
	t.Fatalf("policy %s is not stored", d)
	return store.PolicyRef{}
}
