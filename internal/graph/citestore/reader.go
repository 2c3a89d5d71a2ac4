package citestore

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/provgraph/provgraph/internal/graph"
	"github.com/provgraph/provgraph/internal/model"
	"github.com/provgraph/provgraph/internal/store"
	"github.com/provgraph/provgraph/internal/vocab"
)

// Reader reads single nodes of one read transaction by index lookups and
// keeps what it read in the predicate -> subject -> objects shape the
// builders take (iriNodes), so that a citation read here is built by the
// same functions, from the same predicates, as the scan builds it
// (build.go): the one reader of the RDF model, in two access paths. It
// serves lineage (a citation's nodes, node by node) and the few nodes the
// scan and Catalog read one by one (policies, runs). A Reader is for one
// goroutine and lives as long as its transaction.
type Reader struct {
	ctx context.Context
	g   *graph.Reader // the read transaction lookups go through
	// facts holds the predicate and object of each quad of each node
	// read, as term ids, in Describe's order (predicate, then object):
	// an object is decoded when a builder asks for it (One, All), so that
	// a lean read (Member) decodes only what it builds, and a predicate
	// never is. Each node's facts are one slice of slab, cut as it fills:
	// a lineage reads thousands of nodes, and a map of objects by
	// predicate and subject cost it a map entry and an allocation per
	// quad.
	facts map[string][][2]graph.ID
	slab  [][2]graph.ID
	// partial marks the nodes of facts read for some predicates only
	// (runNode): Node reads them again, whole.
	partial map[string]bool
	cits    map[string]*store.Citation // citation node -> citation, under the policy of the first read
	lean    map[string]*store.Citation // citation node -> citation read lean (member), likewise
	under   map[string][]string        // citation node -> policies it was normalized under
	pols    map[string]store.PolicyRef // policy node -> policy
	// nodeOf is the node of each citation id met (view.go), polList the
	// policies once read (policiesOnce).
	nodeOf  map[string]string
	polList []store.PolicyRef
	// idOf is the term id of each IRI met (the nodes and predicates read
	// or named by what was read), so that a node is read, and a lookup
	// asked, by id: a dictionary lookup of each node's IRI cost a
	// lineage a quarter of its time. pairs is Node's buffer.
	idOf  map[string]graph.ID
	pairs [][2]graph.ID
	// err is the first object that could not be decoded (One, All,
	// which return no error): Citation, Member and Policies return it.
	err error
	// terms are the terms decoded, by id (term).
	terms map[graph.ID]graph.Term
	// in holds, for the nodes whose incoming links were read (readIn), the
	// IRI subjects linking to each by predicate: Subjects answers from it.
	in map[string]map[string][]string
	// skip, while Member or Shown builds a citation, is the literals One
	// leaves undecoded (leanSkip, shownSkip).
	skip map[string]bool
	// win, when set (SetWindow), answers the reads of the nodes it
	// holds, and their terms, in place of point lookups.
	win *window
}

// leanSkip are the literals a lean read (Member) does not decode: what a
// lineage shows only of the citations it was asked for, never of the
// rest of a group (grouping reads none of them; Rules, from the step
// log, make only the reasons of a member, and a lineage shows only its
// own citation's). Each is a B-tree lookup in the term dictionary, most
// of them unique to their citation.
var leanSkip = map[string]bool{
	vocab.ObservedAt: true, vocab.Position: true, vocab.Question: true, vocab.BaseURL: true,
	vocab.Steps: true, vocab.Parsed: true, vocab.ContentType: true, vocab.SnapshotRef: true,
	// a hop's details: grouping counts hops and reads whether one
	// crossed hosts
	vocab.From: true, vocab.To: true, vocab.Status: true, vocab.At: true, vocab.Location: true,
}

// NewReader returns a Reader on the read transaction g.
func NewReader(ctx context.Context, g *graph.Reader) *Reader {
	return &Reader{
		ctx: ctx, g: g,
		facts: map[string][][2]graph.ID{}, partial: map[string]bool{},
		cits: map[string]*store.Citation{}, lean: map[string]*store.Citation{}, under: map[string][]string{}, pols: map[string]store.PolicyRef{},
		nodeOf: map[string]string{}, idOf: map[string]graph.ID{}, in: map[string]map[string][]string{},
		terms: map[graph.ID]graph.Term{},
	}
}

// reset empties r as NewReader makes it, keeping the memory its maps
// have grown to: the view check reads citations a batch at a time, and a
// fresh Reader's maps grew from nothing each batch (rehashing them was
// about a tenth of the check's CPU at a million citations).
func (r *Reader) reset() {
	clear(r.facts)
	clear(r.partial)
	clear(r.cits)
	clear(r.lean)
	clear(r.under)
	clear(r.pols)
	clear(r.nodeOf)
	clear(r.idOf)
	clear(r.terms)
	clear(r.in)
	r.slab, r.pairs, r.polList, r.err, r.skip = nil, r.pairs[:0], nil, nil, nil
	if r.win != nil {
		r.win.lo, r.win.hi = 0, 0
	}
}

// SetWindow reads the nodes with term ids in [lo, hi) in three ordered
// walks (window) and answers r's reads of them from there from now on,
// until the next SetWindow or reset; the nodes read before stay read.
// Every other node is read by point lookups, as without a window.
//
// release, when not nil, is called as the walks go (between them, at
// each node whose links are skipped, every windowRelease entries), so
// that the caller can give back the pages of the file they mapped: a
// skipped node re-seeks every run of OSP, and a window of the first ids
// (the classes and predicates) skips dozens.
func (r *Reader) SetWindow(lo, hi graph.ID, release func()) error {
	if r.win == nil {
		r.win = &window{}
	}
	if release == nil {
		release = func() {}
	}
	return r.win.read(r.ctx, r.g, lo, hi, release)
}

// iriID returns the term id of the IRI n, 0 when it is not stored.
func (r *Reader) iriID(n string) graph.ID {
	if id, ok := r.idOf[n]; ok {
		return id
	}
	id := r.g.ID(graph.IRI(n))
	r.idOf[n] = id
	return id
}

// termID returns the term id of t, 0 when it is not stored.
func (r *Reader) termID(t graph.Term) graph.ID {
	if t.Kind == graph.KindIRI {
		return r.iriID(t.Value)
	}
	return r.g.ID(t)
}

// term returns the term with id, noting the id of an IRI. The terms are
// kept by id: a lineage decodes the same predicates, classes and shared
// literals for every member, and a hit here costs a map lookup, where
// graph.Reader.Term guards every call against a damaged file.
func (r *Reader) term(id graph.ID) (graph.Term, error) {
	if r.win.holds(id) {
		return r.win.term(r, id)
	}
	if t, ok := r.terms[id]; ok {
		return t, nil
	}
	t, err := r.g.Decode(id)
	if err != nil {
		return t, err
	}
	if t.Kind == graph.KindIRI {
		r.idOf[t.Value] = id
	}
	r.terms[id] = t
	return t, nil
}

// Node reads every quad whose subject is n, once.
func (r *Reader) Node(n string) error {
	if n == "" {
		return nil
	}
	if _, ok := r.facts[n]; ok && !r.partial[n] {
		return nil
	}
	delete(r.partial, n)
	id := r.iriID(n)
	if r.win.holds(id) {
		r.facts[n] = r.win.facts(id)
		return nil
	}
	pairs := r.pairs[:0]
	err := r.g.Describe(r.ctx, id, func(p, o graph.ID) { pairs = append(pairs, [2]graph.ID{p, o}) })
	r.pairs = pairs
	if err != nil {
		r.facts[n] = nil
		return fmt.Errorf("citestore: reading %s: %w", n, err)
	}
	if cap(r.slab)-len(r.slab) < len(pairs) {
		r.slab = make([][2]graph.ID, 0, max(len(pairs), 4096))
	}
	k := len(r.slab)
	r.slab = append(r.slab, pairs...)
	r.facts[n] = r.slab[k:len(r.slab):len(r.slab)]
	return nil
}

// runNode reads the quads of the run node n that the catalog builds from
// (runPreds), unless n was read already. An ingest run's node gains a
// pg:linesWritten mark for every batch it commits (5,110 of them at ten
// million citations, more with every ingest), which the catalog never
// reads: reading runs whole cost every lineage, which reads the
// policies and runs, two reads of thousands of quads.
func (r *Reader) runNode(n string) error {
	if _, ok := r.facts[n]; ok || n == "" {
		return nil
	}
	s := r.iriID(n)
	ps := make([]graph.ID, 0, len(runPreds))
	for _, p := range runPreds {
		if id := r.iriID(p); id != 0 {
			ps = append(ps, id)
		}
	}
	slices.Sort(ps)
	pairs := r.pairs[:0]
	for _, p := range ps {
		if err := r.g.Objects(r.ctx, s, p, func(o graph.ID) { pairs = append(pairs, [2]graph.ID{p, o}) }); err != nil {
			r.pairs = pairs
			return fmt.Errorf("citestore: reading %s: %w", n, err)
		}
	}
	r.pairs = pairs
	r.facts[n] = slices.Clone(pairs)
	r.partial[n] = true
	return nil
}

// runPreds are the predicates of a run that Policies and Runs read.
var runPreds = []string{vocab.ProvStartedAtTime, vocab.ProvUsed, vocab.RunStatus}

// objects returns the facts of the node n, read, from the first with
// predicate pred on (the rest of that predicate's follow it), and pred's
// id; nil when n has none with pred.
func (r *Reader) objects(pred, n string) ([][2]graph.ID, graph.ID) {
	fs := r.facts[n]
	if len(fs) == 0 {
		return nil, 0
	}
	p := r.predicateIn(fs, pred)
	if p == 0 {
		return nil, 0
	}
	for i, po := range fs {
		switch {
		case po[0] == p:
			return fs[i:], p
		case po[0] > p:
			return nil, 0
		}
	}
	return nil, 0
}

// predicateIn returns the id of the predicate pred, which the facts fs
// (one node's, in predicate order) have when it is not 0. An id known
// already is taken; otherwise fs's predicates are decoded (term notes
// each IRI's id), which finds pred without looking it up in the
// dictionary, and finds that fs lacks it without a lookup at all. The
// predicates are the vocabulary, with the smallest ids, on a few pages
// of the terms by id; a lookup by hash reads a random page of the hash
// index for each, and a predicate the file does not hold (pg:hostRule in
// a file without host rules) a page of every run of it: by pread from a
// cold page cache, a lineage command at ten million citations read about
// 40 pages and 90 pages more for those.
func (r *Reader) predicateIn(fs [][2]graph.ID, pred string) graph.ID {
	if id, ok := r.idOf[pred]; ok {
		return id
	}
	for i := 0; i < len(fs); {
		p := fs[i][0]
		t, err := r.term(p)
		if err != nil {
			return r.iriID(pred) // the lookup meets the damage too, and says so
		}
		if t.Kind == graph.KindIRI && t.Value == pred {
			return p
		}
		for i < len(fs) && fs[i][0] == p {
			i++
		}
	}
	return 0
}

// first is the id of the first object of (n, pred) among the nodes read,
// and whether there is one.
func (r *Reader) first(pred, n string) (graph.ID, bool) {
	fs, _ := r.objects(pred, n)
	if len(fs) == 0 {
		return 0, false
	}
	return fs[0][1], true
}

// One is the first value of (n, pred) among the nodes read, "" for none.
func (r *Reader) One(pred, n string) string {
	if r.skip != nil && r.skip[pred] {
		return ""
	}
	if id, ok := r.first(pred, n); ok {
		return r.value(id)
	}
	return ""
}

// All is every value of (n, pred) among the nodes read.
func (r *Reader) All(pred, n string) []string {
	var out []string
	fs, p := r.objects(pred, n)
	for _, po := range fs {
		if po[0] != p {
			break
		}
		out = append(out, r.value(po[1]))
	}
	return out
}

// has reports whether (n, pred, o) is among the nodes read.
func (r *Reader) has(n, pred string, o graph.ID) bool {
	fs, p := r.objects(pred, n)
	for _, po := range fs {
		if po[0] != p {
			break
		}
		if po[1] == o {
			return true
		}
	}
	return false
}

// value is the value of the term with id (Term.Value), noting the first
// error in r.err.
func (r *Reader) value(id graph.ID) string {
	t, err := r.term(id)
	if err != nil {
		if r.err == nil {
			r.err = fmt.Errorf("citestore: reading term %d: %w", id, err)
		}
		return ""
	}
	return t.Value
}

// Is reports whether the node n, read, has rdf:type class.
func (r *Reader) Is(n, class string) bool {
	c := r.iriID(class)
	return c != 0 && r.has(n, vocab.RDFType, c)
}

// readIn reads every link into the node n (its incoming quads, OSP),
// once, so that Subjects answers for n from what it read: a lookup of
// each predicate into a normalization or a retrieval (its citations, its
// key, its extractions, its declarations) costs a probe of every run of
// POS. It is for nodes whose links a lineage reads anyway: the subjects
// of every link are decoded, and a retrieval or normalization is linked
// to by every citation of its raw URL.
func (r *Reader) readIn(n string) error {
	if _, ok := r.in[n]; ok || n == "" {
		return nil
	}
	var pairs [][2]graph.ID
	if id := r.iriID(n); r.win.holdsLinks(id) {
		pairs = r.win.links(id)
	} else if err := r.g.Incoming(r.ctx, id, func(s, p graph.ID) { pairs = append(pairs, [2]graph.ID{s, p}) }); err != nil {
		return fmt.Errorf("citestore: reading links into %s: %w", n, err)
	}
	m := map[string][]string{}
	for i, sp := range pairs {
		if i > 0 && sp == pairs[i-1] { // in subject, predicate order: a repeat is in another graph
			continue
		}
		s, err := r.term(sp[0])
		if err != nil {
			return fmt.Errorf("citestore: reading links into %s: %w", n, err)
		}
		if s.Kind != graph.KindIRI {
			continue
		}
		p, err := r.term(sp[1])
		if err != nil {
			return fmt.Errorf("citestore: reading links into %s: %w", n, err)
		}
		m[p.Value] = append(m[p.Value], s.Value)
	}
	r.in[n] = m
	return nil
}

// Subjects returns the IRI subjects of (?, pred, obj).
func (r *Reader) Subjects(pred string, obj graph.Term) ([]string, error) {
	if err := r.ctx.Err(); err != nil {
		return nil, err
	}
	if m, ok := r.in[obj.Value]; ok && obj.Kind == graph.KindIRI {
		return slices.Clone(m[pred]), nil
	}
	var ids []graph.ID
	if o := r.termID(obj); obj.Kind == graph.KindIRI && r.win.holdsLinks(o) {
		if p := r.iriID(pred); p != 0 {
			for _, sp := range r.win.links(o) { // in subject order
				if sp[1] == p && (len(ids) == 0 || ids[len(ids)-1] != sp[0]) {
					ids = append(ids, sp[0])
				}
			}
		}
	} else if err := r.g.Subjects(r.ctx, r.iriID(pred), o, func(s graph.ID) {
		if len(ids) == 0 || ids[len(ids)-1] != s { // in subject order: a repeat is in another graph
			ids = append(ids, s)
		}
	}); err != nil {
		return nil, fmt.Errorf("citestore: reading %s: %w", pred, err)
	}
	var out []string
	for _, id := range ids {
		t, err := r.term(id)
		if err != nil {
			return nil, fmt.Errorf("citestore: reading %s: %w", pred, err)
		}
		if t.Kind == graph.KindIRI {
			out = append(out, t.Value)
		}
	}
	return out, nil
}

// Policies lists the policies, oldest run first, reading only the policy
// and ingest run nodes. It is the one builder of PolicyRef: Catalog and
// the scan call it too. Citation needs it called first, to name the
// policies a citation was normalized under (Under).
func (r *Reader) Policies() ([]store.PolicyRef, error) {
	nodes, err := r.Subjects(vocab.RDFType, graph.IRI(vocab.NormalizationPolicy))
	if err != nil {
		return nil, err
	}
	runs, err := r.Subjects(vocab.RDFType, graph.IRI(vocab.IngestRun))
	if err != nil {
		return nil, err
	}
	last := map[string]time.Time{}
	for _, run := range runs {
		if err := r.runNode(run); err != nil {
			return nil, err
		}
		t, _ := time.Parse(time.RFC3339Nano, r.One(vocab.ProvStartedAtTime, run))
		for _, u := range r.All(vocab.ProvUsed, run) {
			if t.After(last[u]) {
				last[u] = t
			}
		}
	}
	var out []store.PolicyRef
	for _, n := range nodes {
		if err := r.Node(n); err != nil {
			return nil, err
		}
		p := store.PolicyRef{
			PolicyRef: model.PolicyRef{Name: r.One(vocab.PolicyName, n), Version: r.One(vocab.PolicyVersion, n), Digest: r.One(vocab.PolicyDigest, n)},
			Node:      n, Text: r.One(vocab.PolicyText, n), LastRun: last[n],
		}
		r.pols[n] = p
		out = append(out, p)
	}
	slices.SortFunc(out, func(a, b store.PolicyRef) int {
		if c := a.LastRun.Compare(b.LastRun); c != 0 {
			return c
		}
		return strings.Compare(a.Digest, b.Digest)
	})
	return out, r.err
}

// Citation reads the citation node n with its normalization under pol, as
// a scan's Texts.Citations would build it whole (with the step log
// parsed). A citation read once is kept: the first policy asked stays.
func (r *Reader) Citation(n string, pol store.PolicyRef) (*store.Citation, error) {
	if c := r.cits[n]; c != nil {
		return c, nil
	}
	c, err := r.citation(n, pol, readWhole)
	if err != nil {
		return nil, err
	}
	r.cits[n] = c
	return c, nil
}

// shownSkip are the literals a Shown read does not decode: leanSkip's
// but the base URL (its key node is found by it) and the step log (the
// reasons name its rules).
var shownSkip = func() map[string]bool {
	m := maps.Clone(leanSkip)
	delete(m, vocab.BaseURL)
	delete(m, vocab.Steps)
	return m
}()

// Shown reads the citation node n with what a listed group shows of a
// member, and what its reasons, passage check and relations are made of,
// as a scan's lean load builds it for the full listing: not its answer,
// engine, question, observation time, position, hop details or the other
// literals of shownSkip; the step log as its rules only (not parsed);
// Under is left empty. Its comparison key is read as the node ingest
// mints for it (a read of the node) before it is looked for among what
// the normalization generated (a lookup in every run of POS). The full
// listing from a grouping view reads every listed member so. It is not
// kept: the listing reads each citation once.
func (r *Reader) Shown(n string, pol store.PolicyRef) (*store.Citation, error) {
	if c := r.cits[n]; c != nil {
		return c, nil
	}
	r.skip = shownSkip
	c, err := r.citation(n, pol, readShown)
	r.skip = nil
	return c, err
}

// readMode is how much of a citation citation builds.
type readMode int

const (
	readWhole readMode = iota // Citation
	readLean                  // Member
	readShown                 // Shown
)

// Member reads the citation node n with what the review group of a
// lineage needs of the other citations in its neighbourhood: its id, raw
// URL, key (with how it compares), retrievals (outcome, final URL and
// status, content hash, how many hops and whether one crossed hosts,
// canonical declarations, the current extraction's text digest, SimHash
// and soft error) and relations; not its answer, engine, passage checks,
// step log, hop details or the other literals of leanSkip, and Under is
// left empty. A lineage reads hundreds of such citations for a large
// group and shows only the group they make. A citation read whole is
// returned whole.
func (r *Reader) Member(n string, pol store.PolicyRef) (*store.Citation, error) {
	if c := r.cits[n]; c != nil {
		return c, nil
	}
	if c := r.lean[n]; c != nil {
		return c, nil
	}
	r.skip = leanSkip
	c, err := r.citation(n, pol, readLean)
	r.skip = nil
	if err != nil {
		return nil, err
	}
	r.lean[n] = c
	return c, nil
}

// citation builds the citation node n, whole, lean (Member) or as shown
// (Shown).
func (r *Reader) citation(n string, pol store.PolicyRef, mode readMode) (*store.Citation, error) {
	lean, whole := mode == readLean, mode == readWhole
	if err := r.Node(n); err != nil {
		return nil, err
	}
	c := &store.Citation{
		Node: n, ID: r.One(vocab.CitationId, n),
		ObservedAt: r.One(vocab.ObservedAt, n), Position: r.One(vocab.Position, n),
		Question: r.One(vocab.Question, n), BaseURL: r.One(vocab.BaseURL, n),
	}
	if ans := r.One(vocab.InAnswer, n); ans != "" && whole {
		if err := r.Node(ans); err != nil {
			return nil, err
		}
		c.AnswerID = r.One(vocab.AnswerId, ans)
		eng := r.One(vocab.ProvWasAttributedTo, ans)
		if err := r.Node(eng); err != nil {
			return nil, err
		}
		c.Engine = r.One(vocab.EngineName, eng)
	}
	c.RawNode = r.One(vocab.Cites, n)
	if err := r.Node(c.RawNode); err != nil {
		return nil, err
	}
	c.Raw = r.One(vocab.Text, c.RawNode)
	if f, ok := r.first(vocab.Fragment, c.RawNode); ok {
		v := r.value(f)
		c.Fragment = &v
	}
	for _, nrm := range r.All(vocab.NormalizedAs, n) {
		if err := r.Node(nrm); err != nil {
			return nil, err
		}
		assoc := r.One(vocab.ProvQualifiedAssociation, nrm)
		if err := r.Node(assoc); err != nil {
			return nil, err
		}
		plan := r.One(vocab.ProvHadPlan, assoc)
		if p, ok := r.pols[plan]; ok && whole {
			r.under[n] = append(r.under[n], p.String())
		}
		if plan == "" || plan != pol.Node {
			continue
		}
		k, err := r.keyOf(nrm, c, pol, mode)
		if err != nil {
			return nil, err
		}
		c.Norm = buildNormalization(iriNodes{r}, nrm, k, &pol, normOptions[string]{steps: whole})
	}
	var checks []string
	if !lean {
		if whole {
			slices.Sort(r.under[n])
		}
		var err error
		if checks, err = r.Subjects(vocab.CheckOf, graph.IRI(n)); err != nil {
			return nil, err
		}
		for _, p := range checks {
			if err := r.Node(p); err != nil {
				return nil, err
			}
		}
	}
	for _, rt := range r.All(vocab.RetrievedIn, n) {
		if err := r.Node(rt); err != nil {
			return nil, err
		}
		if lean {
			// Its citations share the raw URL, and so the key: the
			// lineage reads them all.
			if err := r.readIn(rt); err != nil {
				return nil, err
			}
		}
		for _, h := range r.All(vocab.Hop, rt) {
			if err := r.Node(h); err != nil {
				return nil, err
			}
		}
		decls, err := r.Generated(rt, vocab.CanonicalDeclaration)
		if err != nil {
			return nil, err
		}
		ret := buildRetrieval(iriNodes{r}, rt, decls)
		exts, err := r.Subjects(vocab.OfRetrieval, graph.IRI(rt))
		if err != nil {
			return nil, err
		}
		evOf := map[string]string{}
		for _, x := range exts {
			if !lean {
				if err := r.Node(x); err != nil {
					return nil, err
				}
				if err := r.Node(r.One(vocab.FromResponse, x)); err != nil {
					return nil, err
				}
			}
			evs, err := r.Generated(x, vocab.ExtractedEvidence)
			if err != nil {
				return nil, err
			}
			if len(evs) > 0 {
				evOf[x] = evs[0]
			}
		}
		evidenceOf(iriNodes{r}, ret, exts, func(x string) string { return evOf[x] },
			func(x string) string { return r.One(vocab.FromResponse, x) }, checks,
			func(p string) string { return r.One(vocab.CheckedAgainst, p) }, lean, c)
		c.Retrievals = append(c.Retrievals, ret)
	}
	for _, rel := range r.All(vocab.QualifiedRelation, n) {
		if err := r.Node(rel); err != nil {
			return nil, err
		}
		if err := r.Node(r.One(vocab.Target, rel)); err != nil {
			return nil, err
		}
		kind := ""
		for _, t := range r.All(vocab.RDFType, rel) {
			if k, ok := model.RelationKindOfClass(t); ok {
				kind = k.Name
			}
		}
		c.Relations = append(c.Relations, buildRelation(iriNodes{r}, rel, kind))
	}
	sortCitation(c)
	if r.err != nil {
		return nil, r.err
	}
	return c, nil
}

// keyOf returns the comparison key node the normalization nrm of c
// generated ("" for none). A Shown read tries the node ingest mints for
// it from c's raw and base URLs and the policy (citestore's mapper)
// first, a read of that node: it is the key when it is a comparison key
// generated by nrm. Otherwise, and for the other reads, the key is the
// first of what nrm generated, found by a lookup in POS, or in the
// window's links when it holds nrm's (SetWindow), which answer from
// memory. The minted node's id is looked for among the few after nrm's
// first (findNear), then in the dictionary.
func (r *Reader) keyOf(nrm string, c *store.Citation, pol store.PolicyRef, mode readMode) (string, error) {
	if mode == readShown && pol.Digest != "" && !r.win.holdsLinks(r.iriID(nrm)) {
		k := Mint("key", c.Raw, c.BaseURL, pol.Digest).Value
		r.findNear(k, r.iriID(nrm))
		if err := r.Node(k); err != nil {
			return "", err
		}
		if r.Is(k, vocab.ComparisonKey) && r.has(k, vocab.ProvWasGeneratedBy, r.iriID(nrm)) {
			return k, nil
		}
	}
	key, err := r.Generated(nrm, vocab.ComparisonKey)
	if err != nil || len(key) == 0 {
		return "", err
	}
	return key[0], nil
}

// keyNear is how many term ids after its normalization's findNear looks
// for a comparison key's node among. Ingest mints the key right after
// its normalization and the normalization's step log (the mapper's
// normalization), so its id is one or two past the normalization's, or a
// few more when the batch mints classes and predicates between them
// (TestShownKeyNearNormalization).
const keyNear = 8

// findNear notes the term id of the IRI n if it is among the keyNear ids
// after near: decoding those, on the page of the term near, costs far
// less than looking n up in the dictionary's hash index (a seek in each
// of its runs, half of a view check's time at ten million citations when
// every Shown read of a key did it). An n already noted, or not found, is
// left to iriID.
func (r *Reader) findNear(n string, near graph.ID) {
	if _, ok := r.idOf[n]; ok || near == 0 {
		return
	}
	max := r.g.MaxID()
	for id := near + 1; id <= near+keyNear && id <= max; id++ {
		t, err := r.term(id) // notes an IRI's id
		if err != nil || t.Kind == graph.KindIRI && t.Value == n {
			return
		}
	}
}

// Generated returns the nodes of the given class that prov:wasGeneratedBy
// activity, read.
func (r *Reader) Generated(activity, class string) ([]string, error) {
	nodes, err := r.Subjects(vocab.ProvWasGeneratedBy, graph.IRI(activity))
	if err != nil {
		return nil, err
	}
	var out []string
	for _, n := range nodes {
		if err := r.Node(n); err != nil {
			return nil, err
		}
		if r.Is(n, class) {
			out = append(out, n)
		}
	}
	slices.Sort(out)
	return out, nil
}

// Under returns the policies (name@version) the citation node n, read
// with Citation, was normalized under, sorted.
func (r *Reader) Under(n string) []string { return r.under[n] }

// runClasses are the run classes, with their kind.
var runClasses = []struct{ class, kind string }{{vocab.IngestRun, "ingest"}, {vocab.ResolveRun, "resolve"}}

// sortRuns puts runs in start order.
func sortRuns(runs []store.Run) {
	slices.SortFunc(runs, func(a, b store.Run) int {
		return cmp.Or(strings.Compare(a.StartedAt, b.StartedAt), strings.Compare(a.Node, b.Node))
	})
}

// Runs reads every ingest and resolve run, node by node (they are few),
// in start order: the one builder of store.Run.
func (r *Reader) Runs() ([]store.Run, error) {
	var out []store.Run
	for _, c := range runClasses {
		nodes, err := r.Subjects(vocab.RDFType, graph.IRI(c.class))
		if err != nil {
			return nil, err
		}
		for _, n := range nodes {
			if err := r.runNode(n); err != nil {
				return nil, err
			}
			out = append(out, store.Run{Node: n, Kind: c.kind, StartedAt: r.One(vocab.ProvStartedAtTime, n), Status: store.RunStatus(r.All(vocab.RunStatus, n))})
		}
	}
	sortRuns(out)
	return out, r.err
}
