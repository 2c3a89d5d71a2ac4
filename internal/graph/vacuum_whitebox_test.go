package graph

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestOpenReplacedWhileWaiting: a process that opened the file before a
// vacuum renamed a new one over it, and got the old file's lock after,
// opens the new file: what it writes is not lost with the old one.
func TestOpenReplacedWhileWaiting(t *testing.T) {
	dir := t.TempDir()
	path, other := filepath.Join(dir, "prov.db"), filepath.Join(dir, "new.db")
	for _, c := range []struct {
		p string
		n int
	}{{path, 1}, {other, 3}} {
		s, err := Open(c.p, nil)
		if err != nil {
			t.Fatal(err)
		}
		for i := range c.n {
			if _, err := s.Add([]Quad{{S: IRI("https://example.org/s"), P: IRI("https://example.org/p"), O: String(string(rune('a' + i)))}}); err != nil {
				t.Fatal(err)
			}
		}
		s.Close()
	}
	defer func() { afterLock = nil }()
	renamed := 0
	afterLock = func(p string) {
		if renamed++; renamed == 1 {
			if err := os.Rename(other, p); err != nil {
				t.Fatal(err)
			}
		}
	}
	s, err := Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if renamed != 2 {
		t.Errorf("the lock taken %d times, want twice: on the old file, then on the new one", renamed)
	}
	if _, err := s.Add([]Quad{{S: IRI("https://example.org/s"), P: IRI("https://example.org/p"), O: String("z")}}); err != nil {
		t.Fatal(err)
	}
	if n, err := s.Count(); err != nil || n != 4 {
		t.Errorf("Count after opening the replaced file = %d, %v; want the new file's 3 and the one added", n, err)
	}
}

// TestVacuumNoSpace: a vacuum without room for the new file says how
// much it needs and where, and changes nothing.
func TestVacuumNoSpace(t *testing.T) {
	path := filepath.Join(t.TempDir(), "prov.db")
	s, err := Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Add([]Quad{{S: IRI("https://example.org/s"), P: IRI("https://example.org/p"), O: String("o")}}); err != nil {
		t.Fatal(err)
	}
	s.Close()
	defer func() { spaceIn = freeSpace }()
	spaceIn = func(string) (int64, bool) { return 1000, true }
	_, err = Vacuum(context.Background(), path, VacuumOptions{})
	if err == nil || !strings.Contains(err.Error(), "vacuum needs about") || !strings.Contains(err.Error(), filepath.Dir(path)) {
		t.Errorf("vacuum without room: %v; want what it needs and where", err)
	}
	if _, err := os.Stat(path + vacuumSuffix); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("temporary file made without room for it: %v", err)
	}
}

// TestVacuumTwice: a vacuum that finds the new file locked by another
// vacuum of the same file says so and leaves that file alone.
func TestVacuumTwice(t *testing.T) {
	path := filepath.Join(t.TempDir(), "prov.db")
	s, err := Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	other, err := os.OpenFile(path+vacuumSuffix, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if err := lockFile(other); err != nil {
		t.Fatal(err)
	}
	if _, err := other.WriteString("the other vacuum's pages"); err != nil {
		t.Fatal(err)
	}
	_, err = Vacuum(context.Background(), path, VacuumOptions{})
	if !errors.Is(err, ErrLocked) || !strings.Contains(err.Error(), "another vacuum") {
		t.Errorf("vacuum beside another: %v; want ErrLocked naming the other vacuum", err)
	}
	if b, err := os.ReadFile(path + vacuumSuffix); err != nil || string(b) != "the other vacuum's pages" {
		t.Errorf("the other vacuum's file after: %q, %v; want it untouched", b, err)
	}
}
