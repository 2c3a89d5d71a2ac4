package graph

import (
	"path/filepath"
	"testing"
)

// TestIDMemo holds the ids kept from one read transaction to the next
// (idMemo) to the snapshots that have them: a later transaction takes a
// found id from the memo, a term not stored is not kept (the next write
// may store it), and a transaction on a snapshot older than the term's
// id does not see it, memo or not.
func TestIDMemo(t *testing.T) {
	s, err := Open(filepath.Join(t.TempDir(), "ids.db"), &Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	a, b := IRI("https://example.org/a"), IRI("https://example.org/b")
	if _, err := s.Add([]Quad{{S: a, P: a, O: a}, {S: a, P: a, O: String("c")}}); err != nil {
		t.Fatal(err)
	}
	id := func(r *Reader, t Term) ID { return r.ID(t) }
	var idA ID
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(s.Read(func(r *Reader) error {
		if idA = id(r, a); idA == 0 {
			t.Fatal("a is not found")
		}
		if id(r, b) != 0 {
			t.Fatal("b is found before it is stored")
		}
		return nil
	}))
	if got := s.ids.get(appendTermCode(nil, a)); got != idA {
		t.Errorf("memo of a = %d, want %d", got, idA)
	}
	if got := s.ids.get(appendTermCode(nil, b)); got != 0 {
		t.Errorf("memo of b, not stored, = %d, want none", got)
	}
	// The memo is what a later transaction answers from: a wrong id put
	// there is what it returns (a test of the path, not of the data).
	s.ids.put(appendTermCode(nil, a), idA+1)
	must(s.Read(func(r *Reader) error {
		if got := id(r, a); got != idA+1 {
			t.Errorf("ID(a) after the memo was set = %d, want the memo's %d", got, idA+1)
		}
		return nil
	}))
	s.ids.put(appendTermCode(nil, a), idA)

	// An older snapshot does not see b, stored after it began.
	inOld, stored, done := make(chan struct{}), make(chan struct{}), make(chan error, 1)
	go func() {
		done <- s.Read(func(r *Reader) error {
			close(inOld)
			<-stored
			if got := id(r, b); got != 0 {
				t.Errorf("ID(b) on the snapshot before b was stored = %d, want 0", got)
			}
			if got := id(r, a); got != idA {
				t.Errorf("ID(a) on the older snapshot = %d, want %d", got, idA)
			}
			return nil
		})
	}()
	<-inOld
	if _, err := s.Add([]Quad{{S: b, P: a, O: b}}); err != nil {
		t.Fatal(err)
	}
	var idB ID
	must(s.Read(func(r *Reader) error {
		idB = id(r, b)
		return nil
	}))
	if idB == 0 || s.ids.get(appendTermCode(nil, b)) != idB {
		t.Fatalf("b stored: ID %d, memo %d", idB, s.ids.get(appendTermCode(nil, b)))
	}
	close(stored)
	must(<-done)
}
