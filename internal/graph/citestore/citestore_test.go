package citestore_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/provgraph/provgraph/internal/graph"
	"github.com/provgraph/provgraph/internal/graph/citestore"
	"github.com/provgraph/provgraph/internal/model"
	"github.com/provgraph/provgraph/internal/normalize"
	"github.com/provgraph/provgraph/internal/store"
	"github.com/provgraph/provgraph/internal/storetest"
	"github.com/provgraph/provgraph/internal/synth"
	"github.com/provgraph/provgraph/internal/vocab"
)

// TestBackend runs the storage suite against the bbolt backend, each test
// on a new database file.
func TestBackend(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Backend {
		g, err := graph.Open(filepath.Join(t.TempDir(), "store.db"), &graph.Options{NoSync: true})
		if err != nil {
			t.Fatalf("graph.Open = %v", err)
		}
		t.Cleanup(func() {
			if err := g.Close(); err != nil {
				t.Errorf("Close = %v", err)
			}
		})
		return citestore.New(g)
	})
}

// TestMatchesMemory appends the same synthetic batches, under two
// policies, with repeats and a conflicting batch, to the bbolt backend and
// to the reference backend (storetest.Memory), and compares every answer:
// data no fixture covers, checked against the interface's contracts.
func TestMatchesMemory(t *testing.T) {
	ctx := context.Background()
	recs := storetest.Synthetic(t, synth.Options{Seed: 15, Sites: 40}, 2000)
	g, err := graph.Open(filepath.Join(t.TempDir(), "store.db"), &graph.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := g.Check(ctx); err != nil {
			t.Errorf("Check = %v", err)
		}
		g.Close()
	})
	backends := map[string]store.Backend{"bbolt": citestore.New(g), "memory": storetest.NewMemory()}
	pols := []*normalize.Policy{normalize.Default(), normalize.Lenient()}

	// Batches of 500, every other one under the lenient policy, then the
	// first two again (idempotent), then one with a changed record (a
	// conflict: refused whole).
	var batches []store.Batch
	for i := 0; i < len(recs); i += 500 {
		batches = append(batches, store.Batch{Policy: pols[i/500%2], Records: recs[i:min(i+500, len(recs))]})
	}
	batches = append(batches, batches[0], batches[1])
	changed := *recs[10]
	changed.Question += " (edited)"
	batches = append(batches, store.Batch{Policy: pols[0], Records: []*model.Record{recs[len(recs)-1], &changed}})
	for i, b := range batches {
		got := map[string]string{}
		for name, be := range backends {
			n, err := be.Append(ctx, b)
			got[name] = fmt.Sprintf("%d %v", n, errors.Is(err, store.ErrConflict))
			if err != nil && !errors.Is(err, store.ErrConflict) {
				t.Fatalf("%s: Append(batch %d) = %v", name, i, err)
			}
		}
		if got["bbolt"] != got["memory"] {
			t.Fatalf("Append(batch %d): bbolt added, conflict = %s; memory %s", i, got["bbolt"], got["memory"])
		}
		if last := i == len(batches)-1; last != strings.HasSuffix(got["bbolt"], "true") {
			t.Fatalf("Append(batch %d): added, conflict = %s; want a conflict exactly in the last batch", i, got["bbolt"])
		}
	}

	compare := func(what string, ask func(store.Backend) ([]string, error)) {
		t.Helper()
		a, errA := ask(backends["bbolt"])
		b, errB := ask(backends["memory"])
		if errA != nil || errB != nil || !slices.Equal(a, b) {
			t.Errorf("%s: bbolt %q, %v; memory %q, %v", what, a, errA, b, errB)
		}
	}
	asked := map[string]bool{}
	for _, r := range recs {
		raw := *r.RawURL
		if asked[raw] {
			continue
		}
		asked[raw] = true
		compare("ByRaw("+raw+")", func(b store.Backend) ([]string, error) { return b.ByRaw(ctx, raw) })
		for _, p := range pols {
			n, err := normalize.New(p, &normalize.Options{Base: r.BaseURL})
			if err != nil {
				t.Fatal(err)
			}
			if res, err := n.Normalize(raw); err == nil {
				compare("ByKey("+p.Name()+", "+res.Key+")", func(b store.Backend) ([]string, error) { return b.ByKey(ctx, p.Digest(), res.Key) })
			}
		}
		if r.Retrieval != nil && r.Retrieval.ContentHash != "" {
			h := r.Retrieval.ContentHash
			compare("ByContent("+h+")", func(b store.Backend) ([]string, error) { return b.ByContent(ctx, h) })
		}
		id := r.ID()
		compare("Digest("+id+")", func(b store.Backend) ([]string, error) {
			d, ok, err := b.Digest(ctx, id)
			return []string{d, fmt.Sprint(ok)}, err
		})
	}
	// The scans agree under both policies, but for the detected relations,
	// which only the bbolt backend's mapping adds.
	all := store.FieldRaw | store.FieldKey | store.FieldContent | store.FieldFinalURL | store.FieldCanonical | store.FieldRelations | store.FieldEvidence
	for _, p := range pols {
		a := storetest.ScanAll(t, backends["bbolt"], p.Digest(), all)
		b := storetest.ScanAll(t, backends["memory"], p.Digest(), all)
		if len(a) != len(b) {
			t.Fatalf("Scan(%s): bbolt %d rows, memory %d", p.Name(), len(a), len(b))
		}
		for i := range a {
			for _, target := range b[i].Relations {
				if !slices.Contains(a[i].Relations, target) {
					t.Errorf("Scan(%s) row %s: bbolt relations %q lack %q", p.Name(), a[i].ID, a[i].Relations, target)
				}
			}
			if b[i].Related && !a[i].Related || a[i].Related && !b[i].Related && len(a[i].Relations) == len(b[i].Relations) {
				t.Errorf("Scan(%s) row %s: bbolt related %v, memory %v (relations %q, %q)", p.Name(), a[i].ID, a[i].Related, b[i].Related, a[i].Relations, b[i].Relations)
			}
			a[i].Relations, b[i].Relations, a[i].Related, b[i].Related = nil, nil, false, false
			if fmt.Sprint(a[i]) != fmt.Sprint(b[i]) {
				t.Errorf("Scan(%s) row %d:\nbbolt  %+v\nmemory %+v", p.Name(), i, a[i], b[i])
			}
		}
	}

	pa, errA := backends["bbolt"].Policies(ctx)
	pb, errB := backends["memory"].Policies(ctx)
	if errA != nil || errB != nil || !slices.Equal(pa, pb) {
		t.Errorf("Policies: bbolt %v, %v; memory %v, %v", pa, errA, pb, errB)
	}
}

// TestDigestTwoStored: a citation that RDF input gave a second record
// digest has no one digest; Digest reports the conflict instead of
// picking one, and Append refuses the citation whatever its content.
func TestDigestTwoStored(t *testing.T) {
	ctx := context.Background()
	g, err := graph.Open(filepath.Join(t.TempDir(), "store.db"), &graph.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	s := citestore.New(g)
	raw := "https://a.test/"
	r := &model.Record{CitationID: "c1", RawURL: &raw, ObservedAt: "2025-01-01T00:00:00Z"}
	if _, err := s.Append(ctx, store.Batch{Policy: normalize.Default(), Records: []*model.Record{r}}); err != nil {
		t.Fatal(err)
	}
	if d, ok, err := s.Digest(ctx, "c1"); err != nil || !ok || d != r.Digest() {
		t.Fatalf("Digest(c1) = %q, %v, %v, want %q", d, ok, err, r.Digest())
	}
	second := graph.Quad{S: citestore.Mint("citation", "c1"), P: graph.IRI(vocab.RecordDigest), O: graph.String("sha256:another")}
	if _, err := g.Add([]graph.Quad{second}); err != nil {
		t.Fatal(err)
	}
	var ce *store.ConflictError
	if _, _, err := s.Digest(ctx, "c1"); !errors.As(err, &ce) || ce.CitationID != "c1" || ce.Where != "the database" {
		t.Errorf("Digest(c1) with two digests: err = %v, want a *ConflictError in the database", err)
	}
	if _, err := s.Append(ctx, store.Batch{Policy: normalize.Default(), Records: []*model.Record{r}}); !errors.Is(err, store.ErrConflict) {
		t.Errorf("Append of c1 with two digests stored: err = %v, want ErrConflict", err)
	}
}

// TestScanExtractionEvidence: the evidence a scan hands over is the
// current extraction's (the greatest by model.CompareExtractions), and a
// retrieval whose current extraction found a soft error is no evidence;
// ByTextDigest finds a citation by any of its extractions' digests.
// Append writes no extraction (resolve adds them), so this is tested on
// the bbolt backend with the mapping resolve uses, not in storetest.
func TestScanExtractionEvidence(t *testing.T) {
	ctx := context.Background()
	g, err := graph.Open(filepath.Join(t.TempDir(), "store.db"), &graph.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	s := citestore.New(g)
	var recs []*model.Record
	for _, id := range []string{"newer", "soft", "fixed", "none"} {
		raw := "https://ex.test/" + id
		recs = append(recs, &model.Record{CitationID: id, RawURL: &raw, ObservedAt: "2026-11-10T10:00:00Z",
			Retrieval: &model.Retrieval{RetrievedAt: "2026-11-10T10:00:01Z", Outcome: model.OutcomeOK, FinalStatus: "200", ContentHash: "sha256:" + id}})
	}
	if _, err := s.Append(ctx, store.Batch{Policy: normalize.Default(), Records: recs}); err != nil {
		t.Fatal(err)
	}
	mapper, err := citestore.NewMapper(normalize.Default())
	if err != nil {
		t.Fatal(err)
	}
	extract := func(id string, exs ...model.Extraction) {
		var rets []graph.Term
		if err := g.Read(func(r *graph.Reader) error {
			return r.Match(ctx, graph.Quad{S: citestore.Mint("citation", id), P: graph.IRI(vocab.RetrievedIn)}, func(q graph.Quad) error {
				rets = append(rets, q.O)
				return nil
			})
		}); err != nil || len(rets) != 1 {
			t.Fatalf("retrievals of %s: %v, %v", id, rets, err)
		}
		var quads []graph.Quad
		for _, ex := range exs {
			quads, _ = mapper.ExtractionQuads(quads, rets[0], ex)
		}
		if _, err := g.Add(quads); err != nil {
			t.Fatal(err)
		}
	}
	extract("newer", model.Extraction{Extractor: "x/1", TextDigest: "sha256:old", SimHash: "00000000000000ff"},
		model.Extraction{Extractor: "x/2", TextDigest: "sha256:new", SimHash: "000000000000ff00"})
	extract("soft", model.Extraction{Extractor: "x/1", TextDigest: "sha256:err", SoftError: "not-found"})
	extract("fixed", model.Extraction{Extractor: "x/1", SoftError: "login-wall"}, model.Extraction{Extractor: "x/2", TextDigest: "sha256:fixed"})
	want := map[string][]storetest.ScanEvidence{
		"newer": {{Content: "sha256:newer", Digest: "sha256:new", SimHash: 0xff00, HasSim: true}},
		"fixed": {{Content: "sha256:fixed", Digest: "sha256:fixed"}},
		"none":  {{Content: "sha256:none"}},
	}
	for _, r := range recs {
		if ev := want[r.CitationID]; ev != nil {
			ev[0].Retrieval = model.RetrievalIRI(*r.RawURL, r.Retrieval)
		}
	}
	rows := storetest.ScanAll(t, s, normalize.Default().Digest(), store.FieldEvidence)
	if len(rows) != len(recs) {
		t.Fatalf("Scan returned %d rows, want %d", len(rows), len(recs))
	}
	for _, row := range rows {
		if !slices.Equal(row.Evidence, want[row.ID]) {
			t.Errorf("row %s: evidence %+v, want %+v", row.ID, row.Evidence, want[row.ID])
		}
	}
	// ByTextDigest finds the citations by any extraction's digest, current
	// or not (a lineage decides which count).
	for digest, ids := range map[string][]string{
		"sha256:old": {"newer"}, "sha256:new": {"newer"}, "sha256:err": {"soft"},
		"sha256:fixed": {"fixed"}, "sha256:none": nil,
	} {
		got, err := s.ByTextDigest(ctx, digest)
		if err != nil || !slices.Equal(got, ids) {
			t.Errorf("ByTextDigest(%q) = %q, %v; want %q", digest, got, err, ids)
		}
	}
	if err := g.Check(ctx); err != nil {
		t.Errorf("Check = %v", err)
	}
}
