package graph_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/provgraph/provgraph/internal/graph"
)

// mustOpen opens path and, like bbolt's btesting.MustCreateDB, checks the
// store's consistency when the test ends (reopening it read-only if the
// test closed it), then closes it.
func mustOpen(tb testing.TB, path string, opts *graph.Options) *graph.Store {
	tb.Helper()
	s, err := graph.Open(path, opts)
	if err != nil {
		tb.Fatalf("Open(%q) = %v", path, err)
	}
	tb.Cleanup(func() { mustCheck(tb, s) })
	return s
}

// mustCheck runs Check on s, or on a read-only reopening of its file if s
// is closed, and closes s.
func mustCheck(tb testing.TB, s *graph.Store) {
	tb.Helper()
	err := s.Check(context.Background())
	if errors.Is(err, graph.ErrClosed) {
		r, oerr := graph.Open(s.Path(), &graph.Options{ReadOnly: true})
		if oerr != nil {
			tb.Errorf("reopen for check: %v", oerr)
			return
		}
		defer r.Close()
		err = r.Check(context.Background())
	}
	if err != nil {
		tb.Errorf("Check: %v", err)
	}
	if err := s.Close(); err != nil {
		tb.Errorf("Close: %v", err)
	}
}

// newStore opens a new store in a temporary directory, without fsync.
func newStore(tb testing.TB) *graph.Store {
	tb.Helper()
	return mustOpen(tb, filepath.Join(tb.TempDir(), "prov.db"), &graph.Options{NoSync: true})
}

// mustAdd adds quads and returns how many were new.
func mustAdd(tb testing.TB, s *graph.Store, quads ...graph.Quad) int {
	tb.Helper()
	n, err := s.Add(quads)
	if err != nil {
		tb.Fatalf("Add: %v", err)
	}
	return n
}

// all returns every quad matching pattern, formatted and sorted.
func all(tb testing.TB, s *graph.Store, pattern graph.Quad) []string {
	tb.Helper()
	var out []string
	err := s.Match(context.Background(), pattern, func(q graph.Quad) error {
		out = append(out, q.String())
		return nil
	})
	if err != nil {
		tb.Fatalf("Match(%v): %v", pattern, err)
	}
	slices.Sort(out)
	return out
}

func mustCount(tb testing.TB, s *graph.Store) int64 {
	tb.Helper()
	n, err := s.Count()
	if err != nil {
		tb.Fatalf("Count: %v", err)
	}
	return n
}

// Vocabulary for realistic test data (ontology/MODEL.md).
const (
	pg   = "https://w3id.org/provgraph/ns#"
	pgid = "https://w3id.org/provgraph/id/"
	prov = "http://www.w3.org/ns/prov#"
	rdf  = "http://www.w3.org/1999/02/22-rdf-syntax-ns#"
)

var rdfType = graph.IRI(rdf + "type")

func q(s, p, o graph.Term) graph.Quad { return graph.Quad{S: s, P: p, O: o} }

// mint returns a content-minted instance IRI as MODEL.md rule 2 describes.
func mint(kind string, fields ...string) graph.Term {
	h := sha256.New()
	for _, f := range append([]string{kind}, fields...) {
		fmt.Fprintf(h, "%d:%s", len(f), f)
	}
	return graph.IRI(pgid + kind + "/" + hex.EncodeToString(h.Sum(nil))[:32])
}

// citation returns the quads of citation i in the shape MODEL.md gives
// (about 22 quads; answers and the engine are shared between citations).
func citation(i int) []graph.Quad {
	id := fmt.Sprintf("cit-%07d", i)
	raw := fmt.Sprintf("https://www.example%d.com/articles/%d?utm_source=chatgpt.com&ref=%d", i%997, i, i%13)
	cit := mint("citation", id)
	ans := mint("answer", "chatgpt", fmt.Sprint(i/5))
	eng := mint("engine", "chatgpt")
	rawN := mint("raw", raw)
	policy := mint("policy", "sha256:0123")
	norm := mint("norm", raw, "", "sha256:0123")
	key := mint("key", raw, "", "sha256:0123")
	return []graph.Quad{
		q(cit, rdfType, graph.IRI(pg+"Citation")),
		q(cit, rdfType, graph.IRI(prov+"Entity")),
		q(cit, graph.IRI(pg+"citationId"), graph.String(id)),
		q(cit, graph.IRI(pg+"position"), graph.Literal(fmt.Sprint(i%10), graph.XSDInteger)),
		q(cit, graph.IRI(pg+"observedAt"), graph.Literal(fmt.Sprintf("2025-01-%02dT%02d:%02d:00Z", 1+i%28, i%24, i%60), graph.XSDDateTime)),
		q(cit, graph.IRI(pg+"recordDigest"), graph.String(mint("digest", id).Value[len(pgid)+7:])),
		q(cit, graph.IRI(pg+"inAnswer"), ans),
		q(cit, graph.IRI(pg+"cites"), rawN),
		q(cit, graph.IRI(pg+"normalizedAs"), norm),
		q(ans, rdfType, graph.IRI(pg+"Answer")),
		q(ans, graph.IRI(prov+"wasAttributedTo"), eng),
		q(rawN, rdfType, graph.IRI(pg+"RawURL")),
		q(rawN, rdfType, graph.IRI(prov+"Entity")),
		q(rawN, graph.IRI(pg+"text"), graph.String(raw)),
		q(norm, rdfType, graph.IRI(pg+"Normalization")),
		q(norm, graph.IRI(prov+"used"), rawN),
		q(norm, graph.IRI(pg+"steps"), graph.String(`[{"rule":"lowercase-host"},{"rule":"remove-param","param":"utm_source"}]`)),
		q(norm, graph.IRI(pg+"policy"), policy),
		q(key, rdfType, graph.IRI(pg+"ComparisonKey")),
		q(key, graph.IRI(prov+"wasGeneratedBy"), norm),
		q(key, graph.IRI(prov+"wasDerivedFrom"), rawN),
		q(key, graph.IRI(pg+"text"), graph.String(strings.Replace(raw, "utm_source=chatgpt.com&", "", 1))),
	}
}

// citations returns the quads of citations [from, to).
func citations(from, to int) []graph.Quad {
	var out []graph.Quad
	for i := from; i < to; i++ {
		out = append(out, citation(i)...)
	}
	return out
}

// distinct counts the distinct quads of quads.
func distinct(quads []graph.Quad) int {
	seen := make(map[graph.Quad]bool)
	for _, q := range quads {
		seen[q] = true
	}
	return len(seen)
}
