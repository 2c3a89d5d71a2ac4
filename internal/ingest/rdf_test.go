package ingest_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/provgraph/provgraph/internal/graph"
	"github.com/provgraph/provgraph/internal/ingest"
	"github.com/provgraph/provgraph/internal/vocab"
)

func loadRDF(t testing.TB, st *graph.Store, path, format string) (ingest.Summary, error) {
	t.Helper()
	return ingest.RDFFile(context.Background(), st, path, filepath.Base(path), format, ingest.Options{Now: clock(), BatchQuads: 1000})
}

// goodNQuads returns n distinct N-Quads lines.
func goodNQuads(n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "<https://example.org/s%d> <https://example.org/p> \"value %d\" <https://example.org/g> .\n", i, i)
	}
	return b.String()
}

func runCount(t testing.TB, st *graph.Store) int {
	t.Helper()
	runs, err := st.Subjects(graph.IRI(vocab.RDFType), graph.IRI(vocab.IngestRun))
	if err != nil {
		t.Fatal(err)
	}
	return len(runs)
}

// Regression test for issue 19.3: a rejected RDF file wrote the statements
// before its bad line, and each retry left another "running" run.
func TestRDFBadInputWritesNothing(t *testing.T) {
	st := openStore(t)
	if _, err := loadRDF(t, st, writeFile(t, "before.nq", goodNQuads(10)), ingest.FormatNQuads); err != nil {
		t.Fatal(err)
	}
	quads, runs := count(t, st), runCount(t, st)
	bad := writeFile(t, "bad.nq", goodNQuads(60000)+"<https://example.org/x> <https://example.org/p> \"caf\xe9\" .\n")
	for try := range 2 {
		_, err := loadRDF(t, st, bad, ingest.FormatNQuads)
		var se *ingest.SyntaxError
		if !errors.As(err, &se) || se.Line != 60001 || se.Column != 53 || !strings.Contains(se.Msg, "invalid UTF-8: byte 0xe9") {
			t.Fatalf("try %d: RDFFile(bad.nq) = %v, want bad.nq:60001:53: invalid UTF-8: byte 0xe9", try, err)
		}
		if got := count(t, st); got != quads {
			t.Errorf("try %d: %d quads after the rejected file, %d before", try, got, quads)
		}
		if got := runCount(t, st); got != runs {
			t.Errorf("try %d: %d ingest runs after the rejected file, %d before", try, got, runs)
		}
	}
}

// TestRDFResumesUnfinishedRun interrupts an RDF load after its first batch:
// loading the same file again completes the same run, and the database
// ends as one uninterrupted load leaves it.
func TestRDFResumesUnfinishedRun(t *testing.T) {
	input := writeFile(t, "in.nq", goodNQuads(250)+"_:b0 <https://example.org/p> _:b1 .\n")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	st := openStore(t)
	first, err := ingest.RDFFile(ctx, st, input, "in.nq", ingest.FormatNQuads, ingest.Options{
		Now: clock(), BatchQuads: 100,
		Progress: func(p ingest.Progress) {
			if p.Phase == "write" {
				cancel()
			}
		},
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("interrupted load = %v, want context.Canceled", err)
	}
	sum, err := loadRDF(t, st, input, ingest.FormatNQuads)
	if err != nil {
		t.Fatal(err)
	}
	if !sum.Resumed || sum.Run != first.Run {
		t.Errorf("second load: run %v, resumed %v; want run %v resumed", sum.Run, sum.Resumed, first.Run)
	}
	status, _ := st.Objects(sum.Run, graph.IRI(vocab.RunStatus))
	if !hasValue(status, "complete") {
		t.Errorf("resumed run status = %v", status)
	}
	if n := runCount(t, st); n != 1 {
		t.Errorf("%d ingest runs, want 1", n)
	}
	clean := openStore(t)
	if _, err := loadRDF(t, clean, input, ingest.FormatNQuads); err != nil {
		t.Fatal(err)
	}
	if a, b := dumpWithoutRuns(t, st), dumpWithoutRuns(t, clean); a != b {
		t.Errorf("resumed database differs from an uninterrupted one:\n%s\n---\n%s", a, b)
	}
}

// TestRDFWritesWhatWasValidated changes the input after the first batch
// is written: the load still writes exactly the statements it validated.
func TestRDFWritesWhatWasValidated(t *testing.T) {
	input := writeFile(t, "in.nq", goodNQuads(300))
	st := openStore(t)
	changed := false
	sum, err := ingest.RDFFile(context.Background(), st, input, "in.nq", ingest.FormatNQuads, ingest.Options{
		Now: clock(), BatchQuads: 100,
		Progress: func(p ingest.Progress) {
			if !changed {
				changed = true
				// Same length, other content, and then a bad line.
				text := strings.ReplaceAll(goodNQuads(300), "value", "VALUE") + "bad\n"
				if err := os.WriteFile(input, []byte(text), 0o644); err != nil {
					t.Fatal(err)
				}
			}
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Records != 300 {
		t.Errorf("%d statements, want 300", sum.Records)
	}
	clean := openStore(t)
	if _, err := loadRDF(t, clean, writeFile(t, "in.nq", goodNQuads(300)), ingest.FormatNQuads); err != nil {
		t.Fatal(err)
	}
	if a, b := dumpWithoutRuns(t, st), dumpWithoutRuns(t, clean); a != b {
		t.Errorf("the load wrote what the file held after validation:\n%s\n---\nwant\n%s", a, b)
	}
}

// rdfErrorTests are inputs that RDFFile must reject, each with where and
// what. Columns count bytes from 1.
var rdfErrorTests = []struct {
	name, format, in string
	line, col        int
	wantMsg          string
}{
	// Issue 19.4: bad text was replaced by U+FFFD.
	{"invalid UTF-8 in a literal", "nq", "<http://a/s> <http://a/p> \"a\xffb\" .\n", 1, 29, "invalid UTF-8: byte 0xff"},
	{"invalid UTF-8 in an IRI", "nt", "\n<http://a/\xc3> <http://a/p> <http://a/o> .\n", 2, 11, "invalid UTF-8: byte 0xc3"},
	{"surrogate escape in a literal", "nq", `<http://a/s> <http://a/p> "x\uD800y" .` + "\n", 1, 29, `\uD800 is a UTF-16 surrogate`},
	{"low surrogate escape in an IRI", "nq", `<http://a/s\udfff> <http://a/p> "x" .`, 1, 12, `\udfff is a UTF-16 surrogate`},
	{"escape past U+10FFFF", "nt", `<http://a/s> <http://a/p> "\U00110000" .`, 1, 28, `past U+10FFFF`},
	{"invalid UTF-8 in Turtle", "ttl", "@prefix ex: <http://a/> .\nex:s ex:p \"\x80\" .\n", 2, 12, "invalid UTF-8: byte 0x80"},
	{"surrogate escape in a Turtle long string", "ttl", "<http://a/s> <http://a/p> \"\"\"one\ntwo \\uD83D\"\"\" .\n", 2, 5, `\uD83D is a UTF-16 surrogate`},
	// Issue 19.11: the parser's token numbers.
	{"literal as predicate", "nq", `<http://a/s> "p" <http://a/o> .`, 1, 14, "expected a predicate IRI, found a literal"},
	{"missing dot", "nt", `<http://a/s> <http://a/p> <http://a/o>`, 1, 39, "expected '.' ending the N-Triples statement, found the end of the line"},
	{"literal as graph", "nq", `<http://a/s> <http://a/p> <http://a/o> "g" .`, 1, 40, "expected a graph name or '.' ending the N-Quads statement, found a literal"},
	{"two statements on a line", "nq", `<http://a/s> <http://a/p> <http://a/o> . <http://a/s> <http://a/p> <http://a/o> .`, 1, 42, "expected the end of the line after '.', found an IRI"},
	{"space in an IRI", "nq", `<http://a/s t> <http://a/p> "x" .`, 1, 12, "a space is not allowed in an IRI"},
	{"'<' in a Turtle IRI", "ttl", `<http://a/s<t> <http://a/p> "x" .`, 1, 12, "'<' is not allowed in an IRI"},
	{"relative IRI", "nt", `<s> <http://a/p> <http://a/o> .`, 1, 1, "IRI <s> is relative"},
	{"bad language tag", "nq", `<http://a/s> <http://a/p> "x"@en- .`, 1, 30, `bad language tag "@en-"`},
	{"unclosed literal", "nq", `<http://a/s> <http://a/p> "x .`, 1, 27, "literal is not closed"},
	{"langString without tag", "nt", `<http://a/s> <http://a/p> "x"^^<http://www.w3.org/1999/02/22-rdf-syntax-ns#langString> .`, 1, 32, "needs a language tag"},
	{"Turtle property list as predicate", "ttl", "<http://a/s> [ <http://a/p> 1 ] <http://a/o> .\n", 1, 14, "expected a predicate IRI, found '['"},
	{"Turtle literal as predicate", "ttl", "<http://a/s> <http://a/p> \"one\" ;\n    'two' .\n", 2, 5, "expected a predicate IRI, found a literal"},
	{"Turtle long literal as subject", "ttl", "<http://a/s> <http://a/p> 1 .\n  \"\"\"x\"\"\" <http://a/p> 1 .\n", 2, 3, "expected a subject"},
	{"Turtle collection as predicate", "ttl", "<http://a/s> ( 1 ) 2 .\n", 1, 14, "expected a predicate IRI, found '('"},
	{"Turtle error after blank nodes", "ttl", "_:a <http://a/p> _:b, \"y\" \"z\" .\n", 1, 27, "expected '.', ';' or ',' after the object, found a literal"},
	{"Turtle undeclared prefix", "ttl", "<http://a/s> <http://a/p> ex:o .\n", 1, 27, `prefix "ex:" is not declared`},
	{"Turtle missing termination", "ttl", "<http://a/s> <http://a/p> <http://a/o> <http://a/x> .\n", 1, 40, "expected '.', ';' or ',' after the object, found an IRI"},
	{"Turtle nested too deep", "ttl", "<http://a/s> <http://a/p> " + strings.Repeat("[ <http://a/p> ", 1001) + "\n", 1, 27 + 1000*15, "nest more than 1000 deep"},
	{"Turtle @PREFIX", "ttl", "@PREFIX ex: <http://a/> .\n", 1, 1, "unknown directive \"@PREFIX\": want @prefix or @base"},
	// Negative syntax tests of the W3C RDF 1.1 Turtle suite
	// (github.com/w3c/rdf-tests, rdf/rdf11/rdf-turtle).
	{"W3C turtle-syntax-bad-number-dot-in-anon", "ttl", "@prefix : <http://www.w3.org/2013/TurtleTests/> .\n\n:s :p [ :p1 27. ] .\n", 3, 15, "expected ']' closing a '[', found '.'"},
	{"W3C turtle-syntax-bad-missing-ns-dot-start", "ttl", "@prefix .undefined: <http://example.com/u#> .\n\n.undefined:s .undefined:p .undefined:o .\n", 1, 9, "expected a prefix name ending with ':'"},
	{"W3C turtle-syntax-bad-missing-ns-dot-end", "ttl", "@prefix valid: <http://example.com/v#> .\n@prefix invalid.: <http://example.com/i#> .\n\nvalid:s valid:p invalid.:o .\n", 2, 9, "expected a prefix name ending with ':'"},
	{"Turtle relative IRI", "ttl", "<s> <http://a/p> <http://a/o> .\n", 1, 1, "IRI <s> is relative"},
}

func TestRDFSyntaxErrors(t *testing.T) {
	for _, tt := range rdfErrorTests {
		t.Run(tt.name, func(t *testing.T) {
			st := openStore(t)
			path := writeFile(t, "in."+tt.format, tt.in)
			_, err := loadRDF(t, st, path, tt.format)
			var se *ingest.SyntaxError
			if !errors.As(err, &se) {
				t.Fatalf("RDFFile(%q) = %v, want a *SyntaxError", tt.in, err)
			}
			if se.File != "in."+tt.format || se.Line != tt.line || se.Column != tt.col || !strings.Contains(se.Msg, tt.wantMsg) {
				t.Errorf("RDFFile(%q) = %v, want in.%s:%d:%d: …%s…", tt.in, err, tt.format, tt.line, tt.col, tt.wantMsg)
			}
			if n := count(t, st); n != 0 {
				t.Errorf("%d quads written", n)
			}
		})
	}
}

// Regression test for issue 19.7: RDF input had no line or literal limit,
// so a line without an end (ingest --format nq /dev/zero) grew without
// bound.
func TestRDFStatementLimit(t *testing.T) {
	for _, format := range []string{"nq", "nt", "ttl"} {
		t.Run(format+" /dev/zero", func(t *testing.T) {
			st := openStore(t)
			_, err := ingest.RDFFile(context.Background(), st, "/dev/zero", "/dev/zero", format, ingest.Options{})
			var se *ingest.SyntaxError
			if !errors.As(err, &se) || se.Line != 1 || !strings.Contains(se.Msg, fmt.Sprintf("line longer than %d bytes", ingest.MaxStatementBytes)) {
				t.Errorf("RDFFile(/dev/zero) = %v, want /dev/zero:1: line longer than %d bytes", err, ingest.MaxStatementBytes)
			}
		})
	}
	t.Run("ttl long literal", func(t *testing.T) {
		// A """literal""" over many short lines: each line is short, the
		// statement is not.
		var b strings.Builder
		b.WriteString("<http://a/s> <http://a/p> \"\"\"\n")
		line := strings.Repeat("x", 1023) + "\n"
		lines := ingest.MaxStatementBytes/len(line) + 1
		for range lines {
			b.WriteString(line)
		}
		b.WriteString("\"\"\" .\n")
		st := openStore(t)
		_, err := loadRDF(t, st, writeFile(t, "long.ttl", b.String()), "ttl")
		var se *ingest.SyntaxError
		if !errors.As(err, &se) || se.Line != lines || se.Column != 0 || !strings.Contains(se.Msg, "statement longer than") {
			t.Errorf("RDFFile(long.ttl) = %v, want long.ttl:%d: statement longer than …", err, lines)
		}
	})
	t.Run("ttl many statements", func(t *testing.T) {
		// The same bytes in statements of their own are fine.
		var b strings.Builder
		for i := range 2000 {
			fmt.Fprintf(&b, "<http://a/s> <http://a/p> \"\"\"%d\n%s\"\"\" .\n", i, strings.Repeat("x", 9000))
		}
		st := openStore(t)
		if sum, err := loadRDF(t, st, writeFile(t, "many.ttl", b.String()), "ttl"); err != nil || sum.Records != 2000 {
			t.Errorf("RDFFile(many.ttl) = %d statements, %v; want 2000", sum.Records, err)
		}
	})
}

// Regression test for issue 19.9: blank nodes of two inputs became one
// node, and a graph named _:defaultGraph was folded into the default graph.
func TestRDFBlankNodesScopedPerInput(t *testing.T) {
	st := openStore(t)
	a := writeFile(t, "a.nq", "_:b0 <http://a/p> \"from a\" _:defaultGraph .\n")
	b := writeFile(t, "b.ttl", "_:b0 <http://a/p> \"from b\" .\n")
	sa, err := loadRDF(t, st, a, "nq")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := loadRDF(t, st, b, "ttl"); err != nil {
		t.Fatal(err)
	}
	subjects := map[graph.Term]bool{}
	graphs := map[graph.Term]bool{}
	err = st.Match(context.Background(), graph.Quad{P: graph.IRI("http://a/p")}, func(q graph.Quad) error {
		subjects[q.S] = true
		graphs[q.G] = true
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(subjects) != 2 {
		t.Errorf("subjects %v: want one node per input", subjects)
	}
	for s := range subjects {
		if s.Kind != graph.KindIRI || !strings.HasPrefix(s.Value, ingest.GenIDBase) || !strings.HasSuffix(s.Value, "/b0") {
			t.Errorf("subject %v: want a skolem IRI under %s ending in /b0", s, ingest.GenIDBase)
		}
	}
	if len(graphs) != 2 || !graphs[graph.Term{}] {
		t.Errorf("graphs %v: want _:defaultGraph's skolem IRI and the default graph", graphs)
	}
	// The node of [] stays apart from the document's own _:b1 (knakk/rdf,
	// used before, named it _:b1 too).
	st2 := openStore(t)
	if _, err := loadRDF(t, st2, writeFile(t, "anon.ttl", "_:b1 <http://a/p> [ <http://a/q> 1 ] .\n"), "ttl"); err != nil {
		t.Fatal(err)
	}
	objects, err := st2.Objects(graph.Term{}, graph.IRI("http://a/p"))
	if err != nil {
		t.Fatal(err)
	}
	subjects2, err := st2.Subjects(graph.IRI("http://a/p"), graph.Term{})
	if err != nil {
		t.Fatal(err)
	}
	if len(objects) != 1 || len(subjects2) != 1 || objects[0] == subjects2[0] {
		t.Errorf("_:b1 <p> [ <q> 1 ]: subject %v, object %v; want two nodes", subjects2, objects)
	}

	// Loading a.nq again adds only the record of the run.
	before := count(t, st)
	again, err := loadRDF(t, st, a, "nq")
	if err != nil {
		t.Fatal(err)
	}
	runQuads, _ := st.Count()
	if added := runQuads - before; int(added) != again.QuadsAdded || again.QuadsAdded != sa.QuadsAdded-1 {
		t.Errorf("second load of a.nq added %d quads; the first added %d, one of them a statement", again.QuadsAdded, sa.QuadsAdded)
	}
}

// TestRDFSpoolLeavesNoFile checks that the spool of parsed statements is
// unlinked while it is in use, so that even a killed load leaves no
// temporary file behind.
func TestRDFSpoolLeavesNoFile(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	input := writeFile(t, "in.nq", goodNQuads(300))
	st := openStore(t)
	var during []os.DirEntry
	_, err := ingest.RDFFile(context.Background(), st, input, "in.nq", ingest.FormatNQuads, ingest.Options{
		Now: clock(), BatchQuads: 100,
		Progress: func(p ingest.Progress) {
			if during == nil {
				var err error
				if during, err = os.ReadDir(tmp); err != nil {
					t.Fatal(err)
				}
			}
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range during {
		t.Errorf("while writing, %s is in TMPDIR: a killed load would leave it behind", e.Name())
	}
}
