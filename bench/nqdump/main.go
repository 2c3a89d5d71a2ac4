// Command nqdump writes, as canonical N-Quads, the quads that provgraph
// ingest would write for a citation JSON Lines file, without opening a
// database: the policy quads once (Mapper.PolicyQuads), then Mapper.Quads
// for every record, in input order, each through graph.AppendNQuad. Quads
// that repeat (an engine's types, a raw URL cited twice) are written every
// time, as ingest hands them to the store, which skips the repeats. Only
// the ingest run's own ten quads (start, end, status, record count) are
// left out: they hold a clock reading and a random nonce.
//
// bench/ingest.sh uses the output as the "equivalent N-Quads file" for
// cayley load.
//
// With -stats FILE it also writes, as markdown, where the quads go: per
// node kind (the kind in IDBase+kind+"/..." of the subject) and per
// predicate, quads emitted and distinct quads stored, per citation, split
// into rdf:type, literal and link (IRI object) quads.
//
// Usage: nqdump [-policy default|lenient|FILE] [-stats FILE] CITATIONS.jsonl|- > OUT.nq
package main

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"

	"github.com/provgraph/provgraph/internal/graph"
	"github.com/provgraph/provgraph/internal/graph/citestore"
	"github.com/provgraph/provgraph/internal/ingest"
	"github.com/provgraph/provgraph/internal/model"
	"github.com/provgraph/provgraph/internal/normalize"
	"github.com/provgraph/provgraph/internal/vocab"
)

func main() {
	if err := run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "nqdump:", err)
		os.Exit(1)
	}
}

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("nqdump", flag.ContinueOnError)
	fs.SetOutput(stderr)
	policy := fs.String("policy", "default", `normalization policy: "default", "lenient" or a TOML file`)
	statsPath := fs.String("stats", "", "write a markdown breakdown of the quads per citation to this file")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return errors.New("usage: nqdump [-policy P] [-stats FILE] CITATIONS.jsonl|-")
	}
	pol := normalize.Default()
	if *policy != "default" {
		var err error
		if pol, err = normalize.LoadPolicy(*policy); err != nil {
			return err
		}
	}
	mapper, err := citestore.NewMapper(pol)
	if err != nil {
		return err
	}

	name := fs.Arg(0)
	in := stdin
	if name != "-" {
		f, err := os.Open(name)
		if err != nil {
			return err
		}
		defer f.Close()
		in = f
	}
	w := bufio.NewWriterSize(stdout, 1<<20)
	var st *stats
	if *statsPath != "" {
		st = newStats()
	}

	var line []byte
	emit := func(quads []graph.Quad) {
		for _, q := range quads {
			line = graph.AppendNQuad(line[:0], q)
			w.Write(line)
			if st != nil {
				st.add(q, line)
			}
		}
	}
	emit(mapper.PolicyQuads())

	br := bufio.NewReaderSize(in, 1<<20)
	var buf []graph.Quad
	records, lineNo := 0, 0
	for {
		text, rerr := br.ReadBytes('\n')
		if len(text) > 0 {
			lineNo++
			if t := bytes.TrimSpace(text); len(t) > 0 {
				rec, err := ingest.ParseRecord(t, name, lineNo)
				if err != nil {
					return err
				}
				buf, _, err = mapper.Quads(buf[:0], rec)
				if err != nil {
					return fmt.Errorf("%s:%d: %w", name, lineNo, err)
				}
				emit(buf)
				records++
			}
		}
		if rerr == io.EOF {
			break
		}
		if rerr != nil {
			return fmt.Errorf("%s: reading after line %d: %w", name, lineNo, rerr)
		}
	}
	if err := w.Flush(); err != nil {
		return err
	}
	if st != nil {
		if err := st.write(*statsPath, records); err != nil {
			return err
		}
	}
	return nil
}

// stats counts emitted and distinct quads by subject node kind and by
// predicate.
type stats struct {
	seen     map[[16]byte]struct{}
	emitted  int
	distinct int
	byKind   map[string]*counts
	byPred   map[string]*counts
}

type counts struct {
	emitted, distinct                  int
	types, literals, links, literalLen int // distinct only
}

func newStats() *stats {
	return &stats{seen: map[[16]byte]struct{}{}, byKind: map[string]*counts{}, byPred: map[string]*counts{}}
}

func (s *stats) add(q graph.Quad, line []byte) {
	sum := sha256.Sum256(line)
	var k [16]byte
	copy(k[:], sum[:16])
	_, dup := s.seen[k]
	if !dup {
		s.seen[k] = struct{}{}
	}
	kind := nodeKind(q.S)
	pred := shortIRI(q.P.Value)
	for _, c := range []*counts{get(s.byKind, kind), get(s.byPred, pred)} {
		c.emitted++
		if dup {
			continue
		}
		c.distinct++
		switch {
		case q.P.Value == vocab.RDFType:
			c.types++
		case q.O.Kind == graph.KindLiteral:
			c.literals++
			c.literalLen += len(q.O.Value)
		default:
			c.links++
		}
	}
	s.emitted++
	if !dup {
		s.distinct++
	}
}

func get(m map[string]*counts, k string) *counts {
	c := m[k]
	if c == nil {
		c = &counts{}
		m[k] = c
	}
	return c
}

// nodeKind returns the kind a minted IRI names (IDBase + kind + "/...").
func nodeKind(t graph.Term) string {
	if rest, ok := strings.CutPrefix(t.Value, model.IDBase); ok {
		if k, _, ok := strings.Cut(rest, "/"); ok {
			return k
		}
	}
	return "other"
}

func shortIRI(s string) string {
	for _, ns := range []struct{ iri, prefix string }{
		{vocab.NS, "pg:"}, {vocab.ProvNS, "prov:"}, {vocab.RDFNS, "rdf:"}, {vocab.RDFSNS, "rdfs:"},
	} {
		if rest, ok := strings.CutPrefix(s, ns.iri); ok {
			return ns.prefix + rest
		}
	}
	return "<" + s + ">"
}

func (s *stats) write(path string, records int) error {
	var b bytes.Buffer
	per := func(n int) string { return fmt.Sprintf("%.2f", float64(n)/float64(records)) }
	fmt.Fprintf(&b, "%d citations: %d quads emitted by the mapper (%s per citation), %d distinct (%s per citation); %d repeats skipped by the store.\n\n",
		records, s.emitted, per(s.emitted), s.distinct, per(s.distinct), s.emitted-s.distinct)

	table := func(title string, m map[string]*counts) {
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		sort.Slice(keys, func(i, j int) bool {
			if m[keys[i]].distinct != m[keys[j]].distinct {
				return m[keys[i]].distinct > m[keys[j]].distinct
			}
			return keys[i] < keys[j]
		})
		fmt.Fprintf(&b, "| %s | emitted/cit | stored/cit | rdf:type | literal | link | literal bytes/cit |\n", title)
		b.WriteString("| --- | ---: | ---: | ---: | ---: | ---: | ---: |\n")
		for _, k := range keys {
			c := m[k]
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s |\n", k, per(c.emitted), per(c.distinct), per(c.types), per(c.literals), per(c.links), per(c.literalLen))
		}
		b.WriteString("\n")
	}
	table("subject node kind", s.byKind)
	table("predicate", s.byPred)
	return os.WriteFile(path, b.Bytes(), 0o644)
}
