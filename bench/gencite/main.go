// Command gencite writes N synthetic citation observations as JSON Lines,
// for benchmarks and crash tests: go run ./bench/gencite -n 100000 > c.jsonl
package main

import (
	"bufio"
	"flag"
	"fmt"
	"os"

	"github.com/provgraph/provgraph/internal/synth"
)

func main() {
	n := flag.Int("n", 1000, "number of citation records")
	seed := flag.Uint64("seed", 1, "random seed; the same seed gives the same output")
	sites := flag.Int("sites", 0, "size of the site pool (0: the default, 2000)")
	flag.Parse()
	w := bufio.NewWriterSize(os.Stdout, 1<<20)
	if err := synth.New(synth.Options{Seed: *seed, Sites: *sites}).Write(w, *n); err != nil {
		fmt.Fprintln(os.Stderr, "gencite:", err)
		os.Exit(1)
	}
	if err := w.Flush(); err != nil {
		fmt.Fprintln(os.Stderr, "gencite:", err)
		os.Exit(1)
	}
}
