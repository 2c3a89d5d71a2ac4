// Command gonorm times provgraph's normalizer over a file of URLs, one per
// line, for bench/run.sh. It runs one untimed warm-up pass, then PASSES
// timed passes of (*normalize.Normalizer).Normalize over every line, step
// log included, on one goroutine, and prints one JSON object to stdout:
//
//	{"impl":"go-provgraph","policy":"default","urls":10000,"rejected":42,"passes_s":[0.0101,...]}
//
// Usage: gonorm [-policy default|lenient|FILE] FILE PASSES
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/provgraph/provgraph/internal/normalize"
)

type report struct {
	Impl     string    `json:"impl"`
	Policy   string    `json:"policy"`
	URLs     int       `json:"urls"`
	Rejected int       `json:"rejected"`
	Steps    int       `json:"steps"`
	Sink     int       `json:"sink"`
	Passes   []float64 `json:"passes_s"`
}

// sink keeps every result observable so no work can be optimized away.
var sink int

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "gonorm:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	fs := flag.NewFlagSet("gonorm", flag.ContinueOnError)
	policy := fs.String("policy", normalize.DefaultPolicyName, `policy: "default", "lenient" or a TOML file`)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 2 {
		return fmt.Errorf("usage: gonorm [-policy NAME] FILE PASSES")
	}
	passes, err := strconv.Atoi(fs.Arg(1))
	if err != nil || passes < 1 {
		return fmt.Errorf("PASSES must be a positive integer, got %q", fs.Arg(1))
	}
	urls, err := readLines(fs.Arg(0))
	if err != nil {
		return err
	}
	p, err := normalize.LoadPolicy(*policy)
	if err != nil {
		return err
	}
	n, err := normalize.New(p, nil)
	if err != nil {
		return err
	}
	rep := report{Impl: "go-provgraph", Policy: *policy, URLs: len(urls)}
	rep.Rejected, rep.Steps = pass(n, urls) // warm-up, untimed
	for i := 0; i < passes; i++ {
		start := time.Now()
		pass(n, urls)
		rep.Passes = append(rep.Passes, time.Since(start).Seconds())
	}
	rep.Sink = sink
	return json.NewEncoder(os.Stdout).Encode(rep)
}

// pass normalizes every URL once and returns how many were rejected and how
// many steps were logged.
func pass(n *normalize.Normalizer, urls []string) (rejected, steps int) {
	for _, u := range urls {
		res, err := n.Normalize(u)
		if err != nil {
			rejected++
		}
		steps += len(res.Steps())
		sink += len(res.Key)
	}
	return rejected, steps
}

// readLines returns the lines of a file without their "\n"; a final empty
// line is dropped. node_url.js splits the file the same way.
func readLines(name string) ([]string, error) {
	data, err := os.ReadFile(name)
	if err != nil {
		return nil, err
	}
	s := strings.TrimSuffix(string(data), "\n")
	if s == "" {
		return nil, fmt.Errorf("%s: no URLs", name)
	}
	return strings.Split(s, "\n"), nil
}
