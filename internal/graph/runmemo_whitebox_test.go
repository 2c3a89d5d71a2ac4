package graph

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
)

// TestRunMemo holds the runs kept from one read transaction to the next
// (runMemo) to their snapshot: a second read on the same snapshot lists
// the runs without opening them (a run is opened when a lookup's filter
// probe lets it through), and a read after a write that added runs sees
// what the write added, in every index, by the file's own reads and by
// pread (ReadOnce).
func TestRunMemo(t *testing.T) {
	for _, once := range []bool{false, true} {
		t.Run(fmt.Sprintf("ReadOnce=%v", once), func(t *testing.T) {
			ctx := context.Background()
			path := filepath.Join(t.TempDir(), "memo.db")
			s, err := Open(path, &Options{NoSync: true})
			if err != nil {
				t.Fatal(err)
			}
			p := IRI("https://example.org/p")
			add := func(from, to int) {
				t.Helper()
				var qs []Quad
				for i := from; i < to; i++ {
					qs = append(qs, Quad{S: IRI(fmt.Sprintf("https://example.org/s/%d", i)), P: p, O: String(fmt.Sprintf("o%d", i))})
				}
				if _, err := s.Add(qs); err != nil {
					t.Fatal(err)
				}
			}
			for b := range 6 {
				add(b*10, b*10+10) // a run per batch in POS and OSP
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
			// lookup finds the subject of object oI, and reports how many
			// of POS's runs the Reader opened.
			lookup := func(i int) (found bool, opened, runs int) {
				t.Helper()
				err := s.Read(func(r *Reader) error {
					err := r.Subjects(ctx, r.ID(p), r.ID(String(fmt.Sprintf("o%d", i))), func(ID) { found = true })
					if x := r.runs.idx[idxPOS]; x != nil {
						runs = len(x.runs)
						for _, fr := range x.runs {
							if fr.b != nil {
								opened++
							}
						}
					}
					return err
				})
				if err != nil {
					t.Fatal(err)
				}
				return found, opened, runs
			}
			if found, opened, runs := lookup(3); !found || opened != runs || runs < 2 {
				t.Fatalf("first read: found %v, %d of %d runs opened; want found, all opened (listed anew), several runs", found, opened, runs)
			}
			if found, opened, runs := lookup(13); !found || opened >= runs {
				t.Errorf("second read on the same snapshot: found %v, %d of %d runs opened; want found, only the runs the filters let through", found, opened, runs)
			}
			if once {
				return // a ReadOnce store is read-only
			}
			// A write that maps the file anew changes the memo's key by the
			// mapping's address alone: the write looked at is one that
			// does not.
			for i := 0; ; i++ {
				lookup(3) // the memo holds this snapshot's runs
				base := s.db.Info().Data
				add(60+10*i, 70+10*i)
				if s.db.Info().Data != base {
					if i == 20 {
						t.Fatal("every write mapped the file anew")
					}
					continue
				}
				if found, _, _ := lookup(65 + 10*i); !found {
					t.Errorf("a read after a write does not find what the write added: the runs kept for the snapshot before were used")
				}
				break
			}
			mustCheckStore(t, s)
		})
	}
}

func mustCheckStore(t *testing.T, s *Store) {
	t.Helper()
	if err := s.Check(context.Background()); err != nil {
		t.Fatalf("Check = %v", err)
	}
}
