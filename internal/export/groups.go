package export

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/provgraph/provgraph/internal/graph"
	"github.com/provgraph/provgraph/internal/graph/citestore"
	"github.com/provgraph/provgraph/internal/model"
	"github.com/provgraph/provgraph/internal/query"
	"github.com/provgraph/provgraph/internal/vocab"
)

// GroupOptions asks Write for the review groups (Options.Groups): the
// groups `provgraph groups` lists with the same options, written as
// derived PROV entities in a named graph of their own (ontology/MODEL.md,
// "Review groups in an export").
type GroupOptions struct {
	// Policy is the policy whose keys the groups are made of, as groups
	// --policy takes it: NAME@VERSION, NAME or a digest; empty means the
	// policy of the latest ingest run. A policy the database does not hold
	// is an error wrapping query.ErrNoPolicy, returned before anything is
	// written.
	Policy string
	// MaxShared, MinSize and Verdict are groups --max-shared, --min-size
	// and --verdict (query.GroupOptions): zero MaxShared means
	// model.DefaultMaxShared, zero MinSize lists every group, empty
	// Verdict every verdict.
	MaxShared int
	MinSize   int
	Verdict   string
	// Review is groups --review-relations: groups smaller than MinSize are
	// also written where they take part in a relation that needs review.
	Review bool
	// View, when set, reads the groups from the database's grouping view
	// of the policy a batch of keys at a time (query.LoadGroupsFromView),
	// so that memory is bounded by the batch, not by the database: the
	// same groups in the same order, the same statements. A database that
	// keeps no view of the policy this build can read is an error
	// wrapping ErrNoView, before anything is written. Without it every
	// citation is loaded at once (query.LoadGroups).
	View *query.ViewRead
}

// ErrNoView is returned (wrapped) when GroupOptions.View asks for the
// grouping view and the database keeps none of the policy that this build
// can read.
var ErrNoView = errors.New("the database keeps no grouping view of the policy that this provgraph can read")

// groupWriter writes the review groups of one export.
type groupWriter struct {
	set      *query.GroupSet
	opts     GroupOptions
	graph    graph.Term // the named graph of the groups
	activity graph.Term // the grouping activity
	software graph.Term // the provgraph build, as the description names it
	policy   graph.Term // the stored node of the policy (zero when none)
	prefix   string     // IRI prefix of the group nodes
	bases    map[string]string
	started  time.Time
	listed   int64
	// full, when the groups are read from the view, reads whole
	// citations: the view keeps what grouping needs of a member, not the
	// nodes of its retrievals, which a group's prov:wasInfluencedBy names.
	full func(ids []string) ([]*query.Citation, error)
	mu   sync.Mutex // guards err: groupQuads runs on several goroutines
	err  error      // the first error of full
}

// newGroupWriter finds the groups before anything is written, so that a
// bad policy fails the export without output.
func newGroupWriter(ctx context.Context, st *graph.Store, o GroupOptions, d *description, now func() time.Time) (*groupWriter, error) {
	started := now()
	cs := citestore.New(st)
	opts := query.GroupOptions{MaxShared: o.MaxShared, MinSize: o.MinSize, Verdict: o.Verdict, Review: o.Review}
	var set *query.GroupSet
	var err error
	if o.View != nil {
		if set, err = query.LoadGroupsFromView(ctx, cs, o.Policy, opts, *o.View); err == nil && set == nil {
			err = ErrNoView
		}
	} else {
		set, err = query.LoadGroups(ctx, cs, o.Policy, opts)
	}
	if err != nil {
		return nil, fmt.Errorf("export: groups: %w", err)
	}
	if o.MaxShared <= 0 {
		o.MaxShared = model.DefaultMaxShared
	}
	gw := &groupWriter{
		set: set, opts: o, started: started,
		graph:    graph.IRI(d.node.Value + "/groups"),
		activity: graph.IRI(d.node.Value + "/grouping"),
		software: graph.IRI(d.node.Value + "/software"),
		prefix:   d.node.Value + "/group/",
		bases:    map[string]string{},
	}
	if o.View != nil {
		digest := set.Policy().Digest
		gw.full = func(ids []string) ([]*query.Citation, error) {
			// Each member is a few reads all over the file, whose pages
			// stay mapped until released: at ten million citations the
			// members of a few thousand groups mapped 3 GB in ten seconds.
			defer st.TrimMapped()
			return cs.Citations(ctx, digest, ids)
		}
	}
	if digest := set.Policy().Digest; digest != "" {
		gw.policy = mintIRI("policy", digest)
		for _, p := range d.policies {
			if p.Digest == digest {
				gw.policy = graph.IRI(p.node)
			}
		}
	}
	// A key node is named from the raw text, the base URL and the policy
	// digest (MODEL.md rule 2); grouping does not read base URLs, and few
	// citations have one.
	err = st.Match(ctx, graph.Quad{P: graph.IRI(vocab.BaseURL)}, func(q graph.Quad) error {
		gw.bases[q.S.Value] = q.O.Value
		return nil
	})
	if err != nil {
		return nil, err
	}
	return gw, nil
}

// write writes the groups through out, a batch at a time as
// query.GroupSet.Write builds them, then the grouping activity.
func (gw *groupWriter) write(ctx context.Context, out *stream, now func() time.Time) error {
	digest := gw.set.Policy().Digest
	var quads []graph.Quad
	_, err := gw.set.Write(ctx, func(buf []byte, g *query.Group) []byte {
		return appendQuads(buf, gw.groupQuads(g, digest))
	}, func(b []byte) error {
		var err error
		if quads, err = readQuads(quads[:0], b, gw.graph); err != nil {
			return err
		}
		for _, q := range quads {
			if q.P.Value == vocab.RDFType && q.O.Value == vocab.ReviewGroup {
				gw.listed++
			}
			if err := out.statement(q); err != nil {
				return err
			}
		}
		return nil
	})
	if err == nil {
		gw.mu.Lock()
		err = gw.err
		gw.mu.Unlock()
	}
	if err != nil {
		return err
	}
	for _, q := range gw.activityQuads(now()) {
		if err := out.statement(q); err != nil {
			return err
		}
	}
	return nil
}

// activityQuads describes the grouping: what it used and its options.
func (gw *groupWriter) activityQuads(ended time.Time) []graph.Quad {
	var out []graph.Quad
	a := gw.activity
	add := func(p string, o graph.Term) { out = append(out, graph.Quad{S: a, P: graph.IRI(p), O: o, G: gw.graph}) }
	when := func(t time.Time) graph.Term {
		return graph.Literal(t.UTC().Format(time.RFC3339Nano), graph.XSDDateTime)
	}
	integer := func(n int) graph.Term { return graph.Literal(strconv.Itoa(n), graph.XSDInteger) }
	add(vocab.RDFType, graph.IRI(vocab.Grouping))
	add(vocab.RDFType, graph.IRI(vocab.ProvActivity))
	add(vocab.RDFSLabel, graph.String("provgraph groups"))
	add(vocab.ProvStartedAtTime, when(gw.started))
	add(vocab.ProvEndedAtTime, when(ended))
	add(vocab.ProvWasAssociatedWith, gw.software)
	if gw.policy.Value != "" {
		add(vocab.ProvUsed, gw.policy)
	}
	add(vocab.MaxShared, integer(gw.opts.MaxShared))
	add(vocab.MinSize, integer(gw.opts.MinSize))
	add(vocab.ReviewRelations, graph.Literal(strconv.FormatBool(gw.opts.Review), graph.XSDBoolean))
	if gw.opts.Verdict != "" {
		add(vocab.VerdictFilter, graph.String(gw.opts.Verdict))
	}
	return out
}

// groupQuads returns the statements of one group: the group, a membership
// node per member with its reasons, and a node per relation. It runs on
// several goroutines at once.
func (gw *groupWriter) groupQuads(g *query.Group, digest string) []graph.Quad {
	var out []graph.Quad
	node := graph.IRI(gw.prefix + g.ID)
	add := func(s graph.Term, p string, o graph.Term) {
		out = append(out, graph.Quad{S: s, P: graph.IRI(p), O: o})
	}
	add(node, vocab.RDFType, graph.IRI(vocab.ReviewGroup))
	add(node, vocab.RDFType, graph.IRI(vocab.ProvCollection))
	add(node, vocab.RDFType, graph.IRI(vocab.ProvEntity))
	add(node, vocab.GroupId, graph.String(g.ID))
	add(node, vocab.GroupKey, graph.String(g.Key))
	add(node, vocab.Verdict, graph.String(g.Verdict))
	add(node, vocab.ProvWasGeneratedBy, gw.activity)
	var keys, evidence []graph.Term
	seen := map[graph.Term]bool{}
	var full []*query.Citation
	if gw.full != nil {
		ids := make([]string, len(g.Members))
		for i, m := range g.Members {
			ids[i] = m.CitationID
		}
		var err error
		if full, err = gw.full(ids); err != nil {
			gw.mu.Lock()
			if gw.err == nil {
				gw.err = fmt.Errorf("export: group %s: %w", g.ID, err)
			}
			gw.mu.Unlock()
			return nil
		}
	}
	for i, m := range g.Members {
		c := m.Citation()
		rc := c // whose retrievals
		if full != nil && full[i] != nil {
			rc = full[i]
		}
		cit := mintIRI("citation", m.CitationID)
		add(node, vocab.ProvHadMember, cit)
		if k := mintIRI("key", c.Raw, gw.bases[cit.Value], digest); !seen[k] {
			seen[k] = true
			keys = append(keys, k)
		}
		// The retrievals whose same-host redirect or content hash is one
		// of the member's reasons (query's reasoner).
		for _, r := range rc.Retrievals {
			redirect := len(r.Hops) > 0 && !r.CrossesHost() && r.FinalURL != ""
			if (redirect || r.ContentHash != "") && r.Node != "" && !seen[graph.IRI(r.Node)] {
				seen[graph.IRI(r.Node)] = true
				evidence = append(evidence, graph.IRI(r.Node))
			}
		}
	}
	for _, k := range keys {
		add(node, vocab.ProvWasDerivedFrom, k)
	}
	for _, r := range evidence {
		add(node, vocab.ProvWasInfluencedBy, r)
	}
	for i, m := range g.Members {
		mn := graph.IRI(node.Value + "/member/" + strconv.Itoa(i+1))
		add(node, vocab.QualifiedMember, mn)
		add(mn, vocab.RDFType, graph.IRI(vocab.GroupMembership))
		add(mn, vocab.RDFType, graph.IRI(vocab.ProvInfluence))
		add(mn, vocab.MemberCitation, mintIRI("citation", m.CitationID))
		reasons, _ := json.Marshal(m.Reasons) // a []string always marshals
		add(mn, vocab.Reasons, graph.String(string(reasons)))
	}
	for i, r := range g.Relations {
		rn := graph.IRI(node.Value + "/relation/" + strconv.Itoa(i+1))
		add(node, vocab.QualifiedGroupRelation, rn)
		add(rn, vocab.RDFType, graph.IRI(vocab.GroupRelation))
		add(rn, vocab.RDFType, graph.IRI(vocab.ProvInfluence))
		add(rn, vocab.RelationType, graph.String(r.Type))
		if r.To != "" {
			add(rn, vocab.RelatedGroupId, graph.String(r.To))
		}
		if r.ToURL != "" {
			add(rn, vocab.RelatedURL, graph.String(r.ToURL))
		}
		add(rn, vocab.Explanation, graph.String(r.Evidence))
		add(rn, vocab.Review, graph.Literal(strconv.FormatBool(r.Review), graph.XSDBoolean))
	}
	return groupBySubject(out)
}

// appendQuads appends the subject, predicate and object of each quad in a
// compact form readQuads reads back: groups are made into statements on
// the goroutine that built them, and written in order by Write's.
func appendQuads(b []byte, quads []graph.Quad) []byte {
	str := func(s string) {
		b = binary.AppendUvarint(b, uint64(len(s)))
		b = append(b, s...)
	}
	for _, q := range quads {
		for _, t := range [3]graph.Term{q.S, q.P, q.O} {
			b = append(b, byte(t.Kind))
			str(t.Value)
			str(t.Datatype)
			str(t.Lang)
		}
	}
	return b
}

var errQuadEncoding = errors.New("export: groups: bad statement encoding")

// readQuads appends the quads appendQuads wrote to dst, in graph g.
func readQuads(dst []graph.Quad, b []byte, g graph.Term) ([]graph.Quad, error) {
	str := func() (string, bool) {
		n, k := binary.Uvarint(b)
		if k <= 0 || uint64(len(b)-k) < n {
			return "", false
		}
		s := string(b[k : k+int(n)])
		b = b[k+int(n):]
		return s, true
	}
	for len(b) > 0 {
		var ts [3]graph.Term
		for i := range ts {
			if len(b) == 0 {
				return dst, errQuadEncoding
			}
			ts[i].Kind = graph.TermKind(b[0])
			b = b[1:]
			var ok1, ok2, ok3 bool
			ts[i].Value, ok1 = str()
			ts[i].Datatype, ok2 = str()
			ts[i].Lang, ok3 = str()
			if !ok1 || !ok2 || !ok3 {
				return dst, errQuadEncoding
			}
		}
		dst = append(dst, graph.Quad{S: ts[0], P: ts[1], O: ts[2], G: g})
	}
	return dst, nil
}
