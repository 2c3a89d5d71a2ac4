// Command pagecost measures what a first touch of a page costs on this
// machine, which decides most of what a large database's queries and
// ingest spend: bbolt reads the file through a shared mapping, so every
// page a read touches for the first time is a page fault, and the Go heap
// grows by pages the kernel maps on first write.
//
// It prints, per page (median of -rounds rounds, each on pages not touched
// before in the process):
//
//   - random 4 KiB reads of FILE through a mapping (each a fault; Linux
//     maps up to 15 neighbours with it, fault-around);
//   - the same number of random pread(2) calls of 64 bytes;
//   - a sequential walk of a mapping, one byte per page;
//   - a walk after MADV_POPULATE_READ set up the mapping's page tables;
//   - the first write of each page of fresh anonymous memory, and a second.
//
// Usage: pagecost [-n 10000] [-rounds 3] FILE
//
// FILE should be in the page cache (read it once first, e.g. with cat
// FILE >/dev/null) and larger than a few hundred MiB, so that the random
// reads fall on different pages. The figures are of the machine, not of
// provgraph; they say why the same build is faster on one machine than
// on another.
package main

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"syscall"
	"time"
)

const madvPopulateRead = 22 // MADV_POPULATE_READ, Linux 5.14

func main() {
	n := flag.Int("n", 10000, "random reads per round")
	rounds := flag.Int("rounds", 3, "rounds; the median is printed")
	flag.Parse()
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: pagecost [-n 10000] [-rounds 3] FILE")
		os.Exit(2)
	}
	if err := run(flag.Arg(0), *n, *rounds); err != nil {
		fmt.Fprintln(os.Stderr, "pagecost:", err)
		os.Exit(1)
	}
}

var sink int

func run(path string, n, rounds int) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return err
	}
	size := int(st.Size())
	const walk = 64 << 20 // bytes walked sequentially per round
	if size < 2*walk {
		return fmt.Errorf("%s: %d bytes; want at least %d", path, size, 2*walk)
	}
	pages := size / 4096
	results := map[string][]time.Duration{}
	add := func(name string, d time.Duration, per int) {
		results[name] = append(results[name], d/time.Duration(per))
	}
	for range rounds {
		// Each round maps the file afresh: none of its pages is mapped.
		m, err := syscall.Mmap(int(f.Fd()), 0, size, syscall.PROT_READ, syscall.MAP_SHARED)
		if err != nil {
			return fmt.Errorf("mmap %s: %w", path, err)
		}
		offs := make([]int, n)
		for i := range offs {
			offs[i] = rand.IntN(pages) * 4096
		}
		t := time.Now()
		for _, o := range offs {
			sink += int(m[o])
		}
		add("mapped random read, per read", time.Since(t), n)

		buf := make([]byte, 64)
		for i := range offs {
			offs[i] = rand.IntN(pages) * 4096
		}
		t = time.Now()
		for _, o := range offs {
			if _, err := f.ReadAt(buf, int64(o)); err != nil {
				return err
			}
		}
		add("pread of 64 bytes, per read", time.Since(t), n)

		// Random pages again, each populated by its own madvise before
		// it is read: what a reader that knows the pages it will read
		// next (a B-tree's leaves, from its branch pages) pays instead of
		// a fault each.
		for i := range offs {
			offs[i] = rand.IntN(pages) * 4096
		}
		t = time.Now()
		for _, o := range offs {
			if err := syscall.Madvise(m[o:o+4096], madvPopulateRead); err != nil {
				return fmt.Errorf("madvise(MADV_POPULATE_READ): %w", err)
			}
		}
		for _, o := range offs {
			sink += int(m[o])
		}
		add("random page populated then read, per page", time.Since(t), n)

		base := rand.IntN((size-2*walk)/4096) * 4096
		t = time.Now()
		for o := base; o < base+walk; o += 4096 {
			sink += int(m[o])
		}
		add("mapped sequential walk, per page", time.Since(t), walk/4096)

		pop := m[base+walk : base+2*walk]
		t = time.Now()
		if err := syscall.Madvise(pop, madvPopulateRead); err != nil {
			return fmt.Errorf("madvise(MADV_POPULATE_READ): %w", err)
		}
		add("MADV_POPULATE_READ, per page", time.Since(t), walk/4096)
		t = time.Now()
		for o := 0; o < walk; o += 4096 {
			sink += int(pop[o])
		}
		add("walk after MADV_POPULATE_READ, per page", time.Since(t), walk/4096)
		if err := syscall.Munmap(m); err != nil {
			return err
		}

		anon, err := syscall.Mmap(-1, 0, walk, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE|syscall.MAP_ANON)
		if err != nil {
			return err
		}
		t = time.Now()
		for o := 0; o < walk; o += 4096 {
			anon[o] = 1
		}
		add("anonymous first write, per page", time.Since(t), walk/4096)
		t = time.Now()
		for o := 0; o < walk; o += 4096 {
			anon[o+8] = 1
		}
		add("anonymous second write, per page", time.Since(t), walk/4096)
		if err := syscall.Munmap(anon); err != nil {
			return err
		}
	}
	for _, name := range []string{
		"mapped random read, per read", "pread of 64 bytes, per read",
		"random page populated then read, per page",
		"mapped sequential walk, per page", "MADV_POPULATE_READ, per page",
		"walk after MADV_POPULATE_READ, per page",
		"anonymous first write, per page", "anonymous second write, per page",
	} {
		ds := results[name]
		slices.Sort(ds)
		fmt.Printf("%-42s median %v (rounds: %v)\n", name, ds[len(ds)/2], ds)
	}
	return nil
}
