package render

import (
	"fmt"
	"io"
	"time"
)

// StoreCounters are the counters of a store that check prints; the CLI
// fills them from graph.Stats (render does not import graph).
type StoreCounters struct {
	Path      string
	Format    string
	Version   int
	Quads     int64
	Terms     int64
	HashRuns  int
	QuadRuns  int
	FileBytes int64
	// FreeBytes is how much of the file its free pages hold.
	FreeBytes int64
}

// CheckCounters writes the first line of check: the file, its format and
// its counters; and, when a quarter of the file or more (and 64 MiB or
// more) is free pages, how much, and the command that gives it back.
func CheckCounters(w io.Writer, c StoreCounters) error {
	free := ""
	if WorthVacuum(c.FreeBytes, c.FileBytes) {
		free = fmt.Sprintf(" (%d of them free: provgraph vacuum --db %s gives them back)", c.FreeBytes, c.Path)
	}
	_, err := fmt.Fprintf(w, "%s: %s version %d, %s, %s, %s, %s, %s%s\n",
		c.Path, c.Format, c.Version, Plural(int(c.Quads), "quad"), Plural(int(c.Terms), "term"),
		Plural(c.HashRuns, "hash-index run"), Plural(c.QuadRuns, "quad-index run"), Plural(int(c.FileBytes), "byte"), free)
	return err
}

// CheckConsistent writes the last line of a check that found no problem.
func CheckConsistent(w io.Writer, took time.Duration) error {
	_, err := fmt.Fprintf(w, "consistent (checked in %s)\n", took.Round(time.Millisecond))
	return err
}

// WorthVacuum says whether a file of size bytes, free of them free, is
// worth a vacuum: a quarter of it or more, and 64 MiB or more, is free.
func WorthVacuum(free, size int64) bool {
	return free >= size/4 && free >= 64<<20
}
