package graph

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"testing"

	"go.etcd.io/bbolt"
)

// TestTermCodeRoundTrip checks that every kind of term decodes to itself
// and that the compact forms are used where they apply and only there.
func TestTermCodeRoundTrip(t *testing.T) {
	tests := []struct {
		term Term
		tag  byte
	}{
		{IRI("https://w3id.org/provgraph/id/citation/0123456789abcdef0123456789abcdef"), tagMinted},
		{IRI("https://w3id.org/provgraph/id/citation/0123456789ABCDEF0123456789abcdef"), tagNS + 5}, // uppercase stays text
		{IRI("https://w3id.org/provgraph/id/citation/0123456789abcdef0123456789abcde"), tagNS + 5},  // 31 digits
		{IRI("https://w3id.org/provgraph/id/agent/provgraph"), tagNS + 5},
		{IRI("https://w3id.org/provgraph/id//0123456789abcdef0123456789abcdef"), tagNS + 5}, // empty kind
		{IRI("https://w3id.org/provgraph/ns#Citation"), tagNS},
		{IRI("http://www.w3.org/ns/prov#Entity"), tagNS + 1},
		{IRI("https://example.com/a b"), tagNS + 10},
		{IRI("urn:x"), tagIRI},
		{Blank("b0"), tagBlank},
		{String(""), tagString},
		{String("a \"q\"\n\x00 café"), tagString},
		{Literal("007", XSDInteger), tagInteger},
		{Literal("2025-01-01T01:00:00+01:00", XSDDateTime), tagDateTime},
		{Literal("true", XSDBoolean), tagBoolean},
		{Literal("1.50", "http://www.w3.org/2001/XMLSchema#decimal"), tagTyped},
		{LangString("colour", "en-gb"), tagLang},
	}
	seen := map[string]Term{}
	for _, tt := range tests {
		n, why := normTerm(tt.term)
		if why != "" {
			t.Fatalf("%s: %s", tt.term, why)
		}
		enc := appendTermCode(nil, n)
		if enc[0] != tt.tag {
			t.Errorf("%s: tag %d, want %d", n, enc[0], tt.tag)
		}
		got, err := decodeTerm(enc)
		if err != nil || got != n {
			t.Errorf("decode(encode(%s)) = %s, %v", n, got, err)
		}
		if v, err := appendTermValue([]byte("x"), enc); err != nil || string(v) != "x"+n.Value {
			t.Errorf("appendTermValue(encode(%s)) = %q, %v; want %q", n, v, err, "x"+n.Value)
		}
		if other, dup := seen[string(enc)]; dup {
			t.Errorf("%s and %s share the encoding %x", n, other, enc)
		}
		seen[string(enc)] = n
	}
}

func FuzzTermCode(f *testing.F) {
	f.Add(uint8(1), "https://w3id.org/provgraph/id/raw/0123456789abcdef0123456789abcdef", "", "")
	f.Add(uint8(2), "x", "http://www.w3.org/2001/XMLSchema#integer", "")
	f.Add(uint8(2), "x", "", "en")
	f.Add(uint8(3), "b", "", "")
	f.Fuzz(func(t *testing.T, kind uint8, value, datatype, lang string) {
		term := Term{Kind: TermKind(kind % 4), Value: value, Datatype: datatype, Lang: lang}
		n, why := normTerm(term)
		if why != "" || n.IsZero() || len(n.Lang) > 255 {
			return
		}
		enc := appendTermCode(nil, n)
		got, err := decodeTerm(enc)
		if err != nil || got != n {
			t.Fatalf("decode(encode(%#v)) = %#v, %v", n, got, err)
		}
		if v, err := appendTermValue(nil, enc); err != nil || string(v) != n.Value {
			t.Fatalf("appendTermValue(encode(%#v)) = %q, %v", n, v, err)
		}
	})
}

// FuzzTermValue checks that appendTermValue accepts exactly what
// decodeTerm accepts, and gives its value.
func FuzzTermValue(f *testing.F) {
	f.Add([]byte{tagIRI, 'x'})
	f.Add([]byte{tagLang, 2, 'e', 'n', 'h', 'i'})
	f.Add([]byte{tagTyped, 1, 'd', 'v'})
	f.Add([]byte{tagMinted, 1, 'r', 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15})
	f.Add([]byte{tagNS + 1, 0xff})
	f.Fuzz(func(t *testing.T, b []byte) {
		want, werr := decodeTerm(b)
		got, gerr := appendTermValue(nil, b)
		if (werr == nil) != (gerr == nil) {
			t.Fatalf("%x: decodeTerm error %v, appendTermValue error %v", b, werr, gerr)
		}
		if werr == nil && string(got) != want.Value {
			t.Fatalf("%x: appendTermValue = %q, decodeTerm value %q", b, got, want.Value)
		}
	})
}

// TestIndexMatchesModel inserts random tuples in random batches and
// checks the index against a sorted set, through scans of every prefix
// length, and the chunks' sizes.
func TestIndexMatchesModel(t *testing.T) {
	db, err := bbolt.Open(filepath.Join(t.TempDir(), "idx.db"), 0o600, &bbolt.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rng := rand.New(rand.NewPCG(1, 2))
	model := map[tuple]bool{}
	random := func() tuple {
		// Small ranges, so that tuples share prefixes and repeat.
		t := tuple{rng.Uint32N(50) + 1, rng.Uint32N(20) + 1, rng.Uint32N(5000) + 1, 0}
		if rng.IntN(10) == 0 {
			t[3] = rng.Uint32N(3) + 1
		}
		if rng.IntN(50) == 0 {
			t[2] = 0xFFFFFFF0 + rng.Uint32N(15) // large ids: 5-byte varints
		}
		return t
	}
	for batch := 0; batch < 60; batch++ {
		ts := make([]tuple, rng.IntN(2000))
		for i := range ts {
			ts[i] = random()
		}
		ts = sortTuples(ts)
		var wantDup []bool
		for _, tu := range ts {
			wantDup = append(wantDup, model[tu])
			model[tu] = true
		}
		err := db.Update(func(tx *bbolt.Tx) error {
			b, err := tx.CreateBucketIfNotExists([]byte("spo"))
			if err != nil {
				return err
			}
			gotDup := make([]bool, len(ts))
			w := &indexWriter{b: b, mem: &arena{}}
			if err := w.insert(ts, func(i int) { gotDup[i] = true }); err != nil {
				return err
			}
			if !slices.Equal(gotDup, wantDup) {
				return fmt.Errorf("batch %d: duplicates reported differ from the model", batch)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	var want []tuple
	for tu := range model {
		want = append(want, tu)
	}
	slices.SortFunc(want, tuple.cmp)
	err = db.View(func(tx *bbolt.Tx) error {
		b := tx.Bucket([]byte("spo"))
		c := b.Cursor()
		for k, v := c.First(); k != nil; k, v = c.Next() {
			if len(v) > chunkMax+16 {
				t.Errorf("chunk %x holds %d bytes, more than %d", k, len(v), chunkMax)
			}
		}
		for _, probe := range []tuple{want[0], want[len(want)/3], want[len(want)-1], {25, 7, 100, 0}} {
			for fixed := 0; fixed <= 4; fixed++ {
				lo, hi := probe, probe
				for i := fixed; i < 4; i++ {
					lo[i], hi[i] = 0, 0xFFFFFFFF
				}
				var got, exp []tuple
				if err := scanRange(b, lo, hi, func(t tuple) error { got = append(got, t); return nil }); err != nil {
					return err
				}
				for _, tu := range want {
					if tu.cmp(lo) >= 0 && tu.cmp(hi) <= 0 {
						exp = append(exp, tu)
					}
				}
				if !slices.Equal(got, exp) {
					t.Errorf("scan %v..%v: %d tuples, want %d", lo, hi, len(got), len(exp))
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestHashIndexRuns adds many small batches, so that the hash index's runs
// are merged level after level, and checks that every term is still found,
// that re-adding adds nothing, that the runs stay few, and Check.
func TestHashIndexRuns(t *testing.T) {
	s, err := Open(filepath.Join(t.TempDir(), "prov.db"), &Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	const batches, per = 150, 20
	batch := func(b int) []Quad {
		var qs []Quad
		for i := range per {
			qs = append(qs, Quad{
				S: IRI(fmt.Sprintf("https://w3id.org/provgraph/id/citation/%032x", b*per+i)),
				P: IRI("https://w3id.org/provgraph/ns#citationId"),
				O: String(fmt.Sprintf("c-%d-%d", b, i)),
			})
		}
		return qs
	}
	for b := range batches {
		if n, err := s.Add(batch(b)); err != nil || n != per {
			t.Fatalf("Add(batch %d) = %d, %v", b, n, err)
		}
	}
	levels := map[int]int{}
	for _, r := range s.runs {
		levels[r.level()]++
	}
	for l, n := range levels {
		if n >= fanout {
			t.Errorf("level %d has %d runs, want fewer than %d", l, n, fanout)
		}
	}
	if levels[3] == 0 {
		t.Errorf("runs by level %v: 150 batches should have made a level-3 run", levels)
	}
	// A fresh Store (no cached filters, no hot terms) finds every term.
	s.Close()
	s, err = Open(s.Path(), &Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	for b := range batches {
		if n, err := s.Add(batch(b)); err != nil || n != 0 {
			t.Fatalf("Add(batch %d again) = %d, %v, want 0", b, n, err)
		}
		q := batch(b)[per-1]
		if ok, err := s.Has(q); !ok || err != nil {
			t.Fatalf("Has(%s) = %v, %v", q, ok, err)
		}
	}
	if err := s.Check(context.Background()); err != nil {
		t.Error(err)
	}
}

// TestBloomStoredForm checks that probing a filter as stored gives the
// same answers as the filter in memory, and no false negatives.
func TestBloomStoredForm(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	f := newBloom(1000)
	var in []uint64
	for range 1000 {
		h := rng.Uint64()
		f.add(h)
		in = append(in, h)
	}
	b := f.bytes()
	for _, h := range in {
		if !f.has(h) || !bloomHasBytes(b, h) {
			t.Fatalf("hash %x added but not found", h)
		}
	}
	positives := 0
	for range 100000 {
		h := rng.Uint64()
		if f.has(h) != bloomHasBytes(b, h) {
			t.Fatalf("hash %x: in memory %v, stored %v", h, f.has(h), bloomHasBytes(b, h))
		}
		if f.has(h) {
			positives++
		}
	}
	if positives > 2000 {
		t.Errorf("%d false positives in 100,000, want about 800", positives)
	}
}

// TestReleasePagesKeepsData checks that releasing the mapped pages of the
// file changes nothing that is read afterwards, in an open read
// transaction and in new ones.
func TestReleasePagesKeepsData(t *testing.T) {
	s, err := Open(filepath.Join(t.TempDir(), "prov.db"), &Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var qs []Quad
	for i := range 2000 {
		qs = append(qs, Quad{S: IRI(fmt.Sprintf("https://example.com/s%d", i)), P: IRI("https://example.com/p"), O: String(fmt.Sprint(i))})
	}
	if _, err := s.Add(qs); err != nil {
		t.Fatal(err)
	}
	count := func() int {
		n := 0
		if err := s.Match(context.Background(), Quad{P: IRI("https://example.com/p")}, func(Quad) error { n++; return nil }); err != nil {
			t.Fatal(err)
		}
		return n
	}
	size := func() (n int64) {
		s.db.View(func(tx *bbolt.Tx) error { n = tx.Size(); return nil })
		return n
	}
	err = s.Read(func(r *Reader) error {
		releasePages(s.db, r.tx.Size())
		n := 0
		err := r.Match(context.Background(), Quad{P: IRI("https://example.com/p")}, func(Quad) error { n++; return nil })
		if n != len(qs) {
			t.Errorf("after release, in an open transaction: %d quads, want %d", n, len(qs))
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	releasePages(s.db, size())
	if n := count(); n != len(qs) {
		t.Errorf("after release: %d quads, want %d", n, len(qs))
	}
	if err := s.Check(context.Background()); err != nil {
		t.Error(err)
	}
}
