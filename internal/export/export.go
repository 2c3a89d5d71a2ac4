package export

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/provgraph/provgraph/internal/graph"
)

// Format is an output syntax.
type Format string

// The formats Write produces.
const (
	// NTriples is W3C N-Triples, one canonical statement per line (graph
	// names dropped).
	NTriples Format = "nt"
	// NQuads is W3C N-Quads, one canonical statement per line; the dataset
	// description is in its own named graph.
	NQuads Format = "nq"
	// Turtle is W3C Turtle with prefixes, statements grouped by subject
	// (graph names dropped).
	Turtle Format = "ttl"
	// JSONLD is JSON-LD 1.1 in flattened form: a @context and a @graph of
	// node objects, one for each run of statements about one subject (graph
	// names dropped).
	JSONLD Format = "jsonld"
)

// Formats lists the formats in the order the command line names them.
var Formats = []Format{NTriples, NQuads, Turtle, JSONLD}

// ErrFormat is returned for a format that is not one of Formats.
var ErrFormat = errors.New("unknown export format")

// Options configures Write. A nil *Options means the zero Options; Format is
// then NTriples.
type Options struct {
	// Format is the output syntax; empty means NTriples.
	Format Format
	// IncludeOntology adds the provgraph vocabulary (ontology/provgraph.ttl)
	// to the output; in N-Quads it is in the graph named by the ontology's
	// IRI.
	IncludeOntology bool
	// Version is the provgraph version the description records; empty
	// means "unknown".
	Version string
	// Groups, when not nil, adds the review groups provgraph groups
	// derives with these options, after the data (and the ontology), as
	// derived PROV entities in the named graph Summary.GroupsGraph. The
	// grouping holds what it needs of every citation in memory, as the
	// groups command does; the groups are written a batch at a time.
	Groups *GroupOptions
	// Now returns the current time; nil means time.Now. Tests pass a clock.
	Now func() time.Time
}

// Summary is what Write wrote.
type Summary struct {
	Format Format
	// Dataset is the dataset node of the description. Every statement of
	// the description has a subject that is Dataset or starts with
	// Dataset.Value + "/", and in N-Quads the graph DescriptionGraph.
	Dataset          graph.Term
	DescriptionGraph graph.Term
	// GroupsGraph names the graph of the review groups (Options.Groups):
	// every statement of them has a subject under Dataset.Value + "/",
	// and in N-Quads this graph. Zero without Options.Groups.
	GroupsGraph graph.Term
	// Data is the number of statements read from the database,
	// Ontology those of the vocabulary (IncludeOntology), Groups those of
	// the review groups and their grouping (Options.Groups) and
	// Description those of the dataset description. Each was written once.
	Data, Ontology, Groups, Description int64
	// ReviewGroups is the number of review groups written.
	ReviewGroups int64
	// RepairedIRIs counts the stored IRIs that were not valid IRIs and were
	// written percent-encoded (see RepairIRI). provgraph itself never
	// stores such IRIs.
	RepairedIRIs int64
	Started      time.Time
	Elapsed      time.Duration
}

// Statements returns the number of statements written.
func (s Summary) Statements() int64 { return s.Data + s.Ontology + s.Groups + s.Description }

// Write writes every statement of st to w in opts.Format, then the
// ontology and the review groups when asked, then the dataset
// description, and flushes. It reads the store in one pass, in the store's
// own order, which is the same for the same database file, and holds at
// most one subject's run of statements in memory, so memory does not grow
// with the database; the review groups (Options.Groups) are found before
// anything is written, which takes memory as the groups command does.
//
// Write reads only; st may be opened read-only. An error leaves w with a
// partial export: use WriteFile for an atomic file.
func Write(ctx context.Context, st *graph.Store, w io.Writer, opts *Options) (Summary, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.Format == "" {
		o.Format = NTriples
	}
	now := o.Now
	if now == nil {
		now = time.Now
	}
	sum := Summary{Format: o.Format, Started: now()}
	bw := bufio.NewWriterSize(w, 256<<10)
	var sink sink
	switch o.Format {
	case NTriples, NQuads:
		sink = &nquadSink{w: bw, quads: o.Format == NQuads}
	case Turtle:
		sink = newTurtleSink(bw)
	case JSONLD:
		sink = newJSONLDSink(bw)
	default:
		return sum, fmt.Errorf("%w %q (want nt, nq, ttl or jsonld)", ErrFormat, o.Format)
	}

	d, err := newDescription(ctx, st, o, sum.Started)
	if err != nil {
		return sum, err
	}
	sum.Dataset, sum.DescriptionGraph = d.node, d.graphName
	var gw *groupWriter
	if o.Groups != nil {
		if gw, err = newGroupWriter(ctx, st, *o.Groups, d, now); err != nil {
			return sum, err
		}
		sum.GroupsGraph = gw.graph
	}

	out := &stream{sink: sink, sum: &sum}
	if err := sink.begin(); err != nil {
		return sum, err
	}
	n := 0
	err = st.Match(ctx, graph.Quad{}, func(q graph.Quad) error {
		if n++; n%4096 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		sum.Data++
		return out.statement(q)
	})
	if err != nil {
		return sum, err
	}
	if o.IncludeOntology {
		quads, err := ontologyQuads()
		if err != nil {
			return sum, err
		}
		for _, q := range quads {
			sum.Ontology++
			if err := out.statement(q); err != nil {
				return sum, err
			}
		}
	}
	if gw != nil {
		counted := &stream{sink: sink, sum: &sum, count: &sum.Groups}
		if err := gw.write(ctx, counted, now); err != nil {
			return sum, err
		}
		sum.ReviewGroups = gw.listed
		d.groups = gw
	}
	quads := d.quads(sum.Data, sum.Ontology, now())
	for _, q := range quads {
		sum.Description++
		if err := out.statement(q); err != nil {
			return sum, err
		}
	}
	if err := sink.end(); err != nil {
		return sum, err
	}
	if err := bw.Flush(); err != nil {
		return sum, err
	}
	sum.Elapsed = now().Sub(sum.Started)
	return sum, nil
}

// sink is one output syntax.
type sink interface {
	begin() error
	statement(q graph.Quad) error
	end() error
}

// stream repairs IRIs and hands statements to the sink, counting them in
// *count when set.
type stream struct {
	sink  sink
	sum   *Summary
	count *int64
}

func (s *stream) statement(q graph.Quad) error {
	if s.count != nil {
		*s.count++
	}
	var err error
	if q.S, err = s.repair(q.S); err != nil {
		return err
	}
	if q.P, err = s.repair(q.P); err != nil {
		return err
	}
	if q.O, err = s.repair(q.O); err != nil {
		return err
	}
	if q.G, err = s.repair(q.G); err != nil {
		return err
	}
	return s.sink.statement(q)
}

// repair returns t with its IRI, or its datatype IRI, made valid.
func (s *stream) repair(t graph.Term) (graph.Term, error) {
	iri := &t.Value
	switch t.Kind {
	case graph.KindIRI:
	case graph.KindLiteral:
		switch t.Datatype {
		case "", graph.XSDString, graph.XSDInteger, graph.XSDDateTime, graph.XSDBoolean, graph.RDFLangStr:
			return t, nil
		}
		iri = &t.Datatype
	default:
		return t, nil
	}
	fixed, changed, err := RepairIRI(*iri)
	if err != nil {
		return t, err
	}
	if changed {
		s.sum.RepairedIRIs++
		*iri = fixed
	}
	return t, nil
}

// nquadSink writes N-Triples or N-Quads.
type nquadSink struct {
	w     *bufio.Writer
	quads bool
	buf   []byte
}

func (s *nquadSink) begin() error { return nil }
func (s *nquadSink) end() error   { return nil }

func (s *nquadSink) statement(q graph.Quad) error {
	if !s.quads {
		q.G = graph.Term{}
	}
	s.buf = graph.AppendValidNQuad(s.buf[:0], q)
	_, err := s.w.Write(s.buf)
	return err
}
