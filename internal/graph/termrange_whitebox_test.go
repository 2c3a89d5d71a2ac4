package graph

import (
	"context"
	"fmt"
	"path/filepath"
	"reflect"
	"testing"
)

// TestRangedReads holds the ranged reads of a window of nodes (TermsIn,
// QuadsIn, IncomingIn) to what the point reads of each node give
// (Decode, Describe, Incoming): every id of every range, over links that
// span several runs of OSP (each node's first link only, with SkipNode)
// and ranges cut short by termRangeBytes, by the
// file's own reads and by pread (ReadOnce).
func TestRangedReads(t *testing.T) {
	defer func(n int) { termRangeBytes = n }(termRangeBytes)
	for _, once := range []bool{false, true} {
		t.Run(fmt.Sprintf("ReadOnce=%v", once), func(t *testing.T) {
			ctx := context.Background()
			path := filepath.Join(t.TempDir(), "ranged.db")
			s, err := Open(path, &Options{NoSync: true})
			if err != nil {
				t.Fatal(err)
			}
			p, link := IRI("https://example.org/p"), IRI("https://example.org/link")
			node := func(i int) Term { return IRI(fmt.Sprintf("https://example.org/s/%d", i)) }
			for b := range 6 { // a run per batch in POS and OSP
				var qs []Quad
				for i := b * 10; i < b*10+10; i++ {
					qs = append(qs, Quad{S: node(i), P: p, O: Literal(fmt.Sprintf("o%d", i), "")},
						Quad{S: node(i), P: link, O: node(i / 3)}, // links into older nodes, from later batches
						Quad{S: node(i), P: link, O: node(i / 3), G: IRI("https://example.org/g")})
				}
				if _, err := s.Add(qs); err != nil {
					t.Fatal(err)
				}
			}
			if once {
				if err := s.Close(); err != nil {
					t.Fatal(err)
				}
				if s, err = Open(path, &Options{ReadOnce: true}); err != nil {
					t.Fatal(err)
				}
			}
			defer func() { s.Close() }()
			err = s.Read(func(r *Reader) error {
				max := r.MaxID()
				for _, limit := range []int{256 << 20, 200} {
					termRangeBytes = limit
					cut := 0
					for lo := ID(1); lo <= max; lo += 7 {
						hi := lo + 23
						var tr TermRange
						if err := r.TermsIn(ctx, lo, hi, &tr); err != nil {
							return err
						}
						held := 0
						for id := lo; id < hi; id++ {
							if !tr.Holds(id) {
								if id <= max {
									cut++
									if limit > 1000 {
										t.Errorf("TermsIn(%d, %d) lacks stored term %d", lo, hi, id)
									}
								}
								continue
							}
							held++
							got, err := tr.Term(id)
							if err != nil {
								return err
							}
							want, err := r.Decode(id)
							if err != nil {
								return err
							}
							if got != want {
								t.Errorf("TermsIn(%d, %d): term %d = %v, Decode %v", lo, hi, id, got, want)
							}
						}
						if held == 0 {
							t.Errorf("TermsIn(%d, %d) with %d bytes holds nothing", lo, hi, limit)
						}
						type pair [3]ID
						var out, in []pair
						if err := r.QuadsIn(ctx, lo, hi, func(s, p, o ID) { out = append(out, pair{s, p, o}) }); err != nil {
							return err
						}
						if err := r.IncomingIn(ctx, lo, hi, func(o, s, p ID) error { in = append(in, pair{o, s, p}); return nil }); err != nil {
							return err
						}
						// SkipNode: the first link into each node only.
						var firsts, wantFirsts []pair
						if err := r.IncomingIn(ctx, lo, hi, func(o, s, p ID) error { firsts = append(firsts, pair{o, s, p}); return SkipNode }); err != nil {
							return err
						}
						var wantOut, wantIn []pair
						for id := lo; id < min(hi, max+1); id++ {
							if err := r.Describe(ctx, id, func(p, o ID) { wantOut = append(wantOut, pair{id, p, o}) }); err != nil {
								return err
							}
							if err := r.Incoming(ctx, id, func(s, p ID) { wantIn = append(wantIn, pair{id, s, p}) }); err != nil {
								return err
							}
						}
						if !reflect.DeepEqual(out, wantOut) {
							t.Errorf("QuadsIn(%d, %d) = %v, Describe %v", lo, hi, out, wantOut)
						}
						for i, l := range wantIn {
							if i == 0 || l[0] != wantIn[i-1][0] {
								wantFirsts = append(wantFirsts, l)
							}
						}
						if !reflect.DeepEqual(firsts, wantFirsts) {
							t.Errorf("IncomingIn(%d, %d) skipping = %v, want the first links %v", lo, hi, firsts, wantFirsts)
						}
						if !reflect.DeepEqual(in, wantIn) {
							t.Errorf("IncomingIn(%d, %d) = %v, Incoming %v", lo, hi, in, wantIn)
						}
					}
					if limit < 1000 && cut == 0 {
						t.Errorf("no range was cut at %d bytes of terms", limit)
					}
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
		})
	}
}
