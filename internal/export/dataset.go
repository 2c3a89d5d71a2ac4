package export

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/provgraph/provgraph/internal/graph"
	"github.com/provgraph/provgraph/internal/model"
	"github.com/provgraph/provgraph/internal/normalize"
	"github.com/provgraph/provgraph/internal/vocab"
)

// Namespaces of the terms the dataset description uses, besides rdf:,
// rdfs:, xsd:, prov: and pg:. They are W3C and DCMI recommendations, so a
// catalogue reads the description without knowing provgraph.
const (
	// DCATNS is the W3C Data Catalog Vocabulary, written dcat:.
	DCATNS = "http://www.w3.org/ns/dcat#"
	// DCTNS is DCMI Metadata Terms, written dct:.
	DCTNS = "http://purl.org/dc/terms/"
	// VoIDNS is the Vocabulary of Interlinked Datasets, written void:.
	VoIDNS = "http://rdfs.org/ns/void#"
	// SKOSNS is the Simple Knowledge Organization System, written skos:.
	SKOSNS = "http://www.w3.org/2004/02/skos/core#"
	// OWLNS is the Web Ontology Language, written owl:.
	OWLNS = "http://www.w3.org/2002/07/owl#"
)

// OntologyIRI is the IRI of the provgraph vocabulary, and the graph the
// ontology is written in in N-Quads.
const OntologyIRI = "https://w3id.org/provgraph/ns"

// codebookRules is the codebook's description: how groups are formed.
var codebookRules = "Review groups are derived by a query and merge nothing: every member keeps its own raw URL, fragment, resolved URL and key. " +
	"Citations whose comparison keys are equal under the policy form a group. " +
	"A same-host redirect chain joins the source's group with the target's, unless more than " + strconv.Itoa(model.DefaultMaxShared) +
	" groups (groups --max-shared) redirect to that target: a login wall, a home page or a soft-404 page is not duplicate evidence; " +
	"the same bound applies to a content hash, text digest or SimHash shared between groups. " +
	"Content evidence counts only from successful retrievals: a 2xx final response that the extractor did not class as an error, soft-404, login or empty page. " +
	"Cross-host redirects, canonical declarations, format variants (AMP, print, ...), mirrors, syndicated copies, archive snapshots, content hashes shared between groups and main texts shared between groups (same-text: an equal text digest, or SimHashes within the near-duplicate threshold) never join groups; they are relations between groups, and same-text relations are flagged for review. " +
	"Raw URLs the policy rejected are never grouped. " +
	"A verdict says how strong the reason to review the members together is, never that they are the same resource. " +
	groupRelationKinds()

// groupRelationKinds describes the derived group relation kinds
// (model.GroupRelationKinds), as pg:relationType names them.
func groupRelationKinds() string {
	var parts []string
	for _, k := range model.GroupRelationKinds {
		parts = append(parts, k.Name+": "+k.Description)
	}
	return "Derived group relations (pg:relationType): " + strings.Join(parts, "; ") + "."
}

// convention is a rule the data follows that a count depends on.
type convention struct {
	id, title, description string
	values                 []graph.Term // rdf:value, when the convention has one
}

// conventions returns the conventions of a dataset whose resolve runs
// applied the given redirect limits; with none, the redirect limit is not
// stated, because nothing in the data was retrieved under one.
func conventions(redirectLimits []int64) []convention {
	cs := []convention{
		{"url-literals", "URLs are exact xsd:string literals",
			"Every URL as given (raw URL, redirect hop from and to, final URL, canonical URL, relation target) and every comparison key is an xsd:string literal holding the exact text, never an IRI and never xsd:anyURI: " +
				"an IRI would have to escape or reject text that is not a valid IRI, and xsd:anyURI invites processors to normalize or refuse the value, while the exact text is the evidence. " +
				"Instance nodes are minted IRIs (" + model.IDBase + "KIND/HEX), never made from a URL, so every IRI in the data is valid per RFC 3987 whatever the raw URLs contained.",
			[]graph.Term{graph.IRI(graph.XSDString)}},
		{"timestamps", "timestamps keep their observed lexical form",
			"Every time is an xsd:dateTime literal whose lexical form is the RFC 3339 text exactly as observed, offset included: 2025-01-01T01:00:00+01:00 and 2025-01-01T00:00:00Z stay two literals. " +
				"Times provgraph records itself (ingest runs, exports) are UTC with up to nine fractional digits.",
			[]graph.Term{graph.IRI(graph.XSDDateTime)}},
		{"integers", "statuses, positions and counts are xsd:integer",
			"HTTP statuses, citation positions, hop indexes and record counts are xsd:integer literals in the lexical form given.",
			[]graph.Term{graph.IRI(graph.XSDInteger)}},
	}
	if len(redirectLimits) == 0 {
		return cs
	}
	var values []graph.Term
	for _, n := range redirectLimits {
		values = append(values, graph.Literal(strconv.FormatInt(n, 10), graph.XSDInteger))
	}
	return append(cs, convention{"redirect-limit", "redirect limit",
		"The most redirects a retrieval made by provgraph resolve followed before its outcome was too-many-redirects: each rdf:value is the limit of one or more of the resolve runs in the data (pg:maxRedirects of each pg:ResolveRun says which). " +
			"Retrievals given in the input are ingested as recorded, under no limit of provgraph's. The limit is stated so that a count of redirect chains can be explained.",
		values})
}

// policyInfo is a normalization policy as stored in the database: its
// name (model.PolicyRef), its node and text, and the parser it ran on.
type policyInfo struct {
	model.PolicyRef
	node                  string
	parser, parserVersion string
	text                  string
}

// description collects, before the data is written, what the dataset
// description says, and makes its quads after.
type description struct {
	node, graphName graph.Term
	opts            Options
	started         time.Time
	policies        []policyInfo
	groups          *groupWriter // the review groups written, when asked
	redirectLimits  []int64      // the distinct pg:maxRedirects of the resolve runs, ascending
	extractors      []string     // the distinct pg:extractor values of the stored extractions, sorted
}

func newDescription(ctx context.Context, st *graph.Store, o Options, started time.Time) (*description, error) {
	startText := started.UTC().Format(time.RFC3339Nano)
	// The dataset is the same whatever the syntax, so the format is not
	// part of its name: exports made with the same clock reading in two
	// formats are isomorphic graphs.
	node := mintIRI("export", startText)
	d := &description{node: node, graphName: graph.IRI(node.Value + "/description"), opts: o, started: started}
	pols, err := st.Subjects(graph.IRI(vocab.RDFType), graph.IRI(vocab.NormalizationPolicy))
	if err != nil {
		return nil, err
	}
	for _, p := range pols {
		if p.Kind != graph.KindIRI {
			continue
		}
		info := policyInfo{node: p.Value}
		err := st.Match(ctx, graph.Quad{S: p}, func(q graph.Quad) error {
			if q.O.Kind != graph.KindLiteral {
				return nil
			}
			switch q.P.Value {
			case vocab.PolicyName:
				info.Name = q.O.Value
			case vocab.PolicyVersion:
				info.Version = q.O.Value
			case vocab.PolicyDigest:
				info.Digest = q.O.Value
			case vocab.ParserName:
				info.parser = q.O.Value
			case vocab.ParserVersion:
				info.parserVersion = q.O.Value
			case vocab.PolicyText:
				info.text = q.O.Value
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
		d.policies = append(d.policies, info)
	}
	slices.SortFunc(d.policies, func(a, b policyInfo) int { return strings.Compare(a.Digest+a.node, b.Digest+b.node) })
	if d.redirectLimits, err = redirectLimits(st); err != nil {
		return nil, err
	}
	if d.extractors, err = extractors(ctx, st); err != nil {
		return nil, err
	}
	return d, nil
}

// extractors returns the distinct extractor versions (pg:extractor) of the
// content evidence stored in st, sorted: evidence made by two versions of
// the extractor may differ, so a reader must know which made what.
func extractors(ctx context.Context, st *graph.Store) ([]string, error) {
	seen := map[string]bool{}
	err := st.Match(ctx, graph.Quad{P: graph.IRI(vocab.Extractor)}, func(q graph.Quad) error {
		if q.O.Kind == graph.KindLiteral {
			seen[q.O.Value] = true
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	out := make([]string, 0, len(seen))
	for v := range seen {
		out = append(out, v)
	}
	slices.Sort(out)
	return out, nil
}

// redirectLimits returns the distinct redirect limits (pg:maxRedirects)
// the resolve runs in st recorded, ascending.
func redirectLimits(st *graph.Store) ([]int64, error) {
	runs, err := st.Subjects(graph.IRI(vocab.RDFType), graph.IRI(vocab.ResolveRun))
	if err != nil {
		return nil, err
	}
	var limits []int64
	for _, r := range runs {
		objs, err := st.Objects(r, graph.IRI(vocab.MaxRedirects))
		if err != nil {
			return nil, err
		}
		for _, o := range objs {
			if n, err := strconv.ParseInt(o.Value, 10, 64); err == nil && o.Kind == graph.KindLiteral {
				limits = append(limits, n)
			}
		}
	}
	slices.Sort(limits)
	return slices.Compact(limits), nil
}

// mintIRI names a node as ingest does (model.Mint), as a graph term.
func mintIRI(kind string, fields ...string) graph.Term {
	return graph.IRI(model.Mint(kind, fields...))
}

// quads returns the description, every quad in d.graphName.
func (d *description) quads(data, ontology int64, ended time.Time) []graph.Quad {
	var out []graph.Quad
	add := func(s graph.Term, p string, o graph.Term) {
		out = append(out, graph.Quad{S: s, P: graph.IRI(p), O: o, G: d.graphName})
	}
	types := func(s graph.Term, classes ...string) {
		for _, c := range classes {
			add(s, vocab.RDFType, graph.IRI(c))
		}
	}
	str := func(s graph.Term, p, v string) {
		if v != "" {
			add(s, p, graph.String(v))
		}
	}
	sub := func(path string) graph.Term { return graph.IRI(d.node.Value + "/" + path) }
	when := func(t time.Time) graph.Term {
		return graph.Literal(t.UTC().Format(time.RFC3339Nano), graph.XSDDateTime)
	}
	integer := func(n int64) graph.Term { return graph.Literal(strconv.FormatInt(n, 10), graph.XSDInteger) }

	ds, act, sw := d.node, sub("activity"), sub("software")
	types(ds, DCATNS+"Dataset", VoIDNS+"Dataset", vocab.ProvEntity)
	str(ds, DCTNS+"title", "provgraph export")
	str(ds, DCTNS+"description", "The provenance graph of URLs cited by AI answer engines, as provgraph stores it: W3C PROV-O with the provgraph vocabulary ("+OntologyIRI+"). "+
		"This description (every statement whose subject is "+ds.Value+" or starts with "+ds.Value+"/; in N-Quads, the graph "+d.graphName.Value+") describes the export and is not part of the data. "+
		"void:triples counts the statements read from the database.")
	add(ds, DCTNS+"issued", when(d.started))
	add(ds, vocab.ProvGeneratedAtTime, when(d.started))
	add(ds, vocab.ProvWasGeneratedBy, act)
	add(ds, VoIDNS+"triples", integer(data))
	add(ds, VoIDNS+"vocabulary", graph.IRI(vocab.NS))
	add(ds, VoIDNS+"vocabulary", graph.IRI(vocab.ProvNS))
	if d.opts.IncludeOntology {
		str(ds, vocab.RDFSComment, fmt.Sprintf("The output also holds the %d statements of the provgraph vocabulary (%s; in N-Quads, the graph %s).", ontology, OntologyIRI, OntologyIRI))
	}
	if g := d.groups; g != nil {
		str(ds, vocab.RDFSComment, fmt.Sprintf("The output also holds %d review groups that provgraph groups derived, under policy %s, from the data: derived, not read from the database. "+
			"Their statements have subjects under %s/group/ and the grouping %s, and in N-Quads the graph %s.", g.listed, g.set.Policy(), ds.Value, g.activity.Value, g.graph.Value))
	}

	// The export: an activity of this provgraph build.
	types(act, vocab.ProvActivity)
	str(act, vocab.RDFSLabel, "provgraph export")
	add(act, vocab.ProvStartedAtTime, when(d.started))
	add(act, vocab.ProvEndedAtTime, when(ended))
	add(act, vocab.ProvWasAssociatedWith, sw)
	types(sw, vocab.ProvSoftwareAgent, vocab.ProvAgent)
	str(sw, vocab.RDFSLabel, "provgraph")
	version := d.opts.Version
	if version == "" {
		version = "unknown"
	}
	str(sw, OWLNS+"versionInfo", version)
	add(sw, DCTNS+"isVersionOf", graph.IRI(model.AgentIRI))

	// The policies: the stored node (the data holds its name, version,
	// digest, parser and text), and what the description repeats of it,
	// with the tracking parameters read from its text.
	parsers := map[graph.Term]bool{} // policies may share a parser: describe it once
	for _, p := range d.policies {
		pn := graph.IRI(p.node)
		add(act, vocab.ProvUsed, pn)
		pd := sub("policy/" + strings.TrimPrefix(mintIRI("policy", p.Digest, p.node).Value, model.IDBase+"policy/"))
		add(ds, DCTNS+"conformsTo", pd)
		types(pd, DCTNS+"Standard", SKOSNS+"ConceptScheme", vocab.ProvPlan, vocab.ProvEntity)
		str(pd, vocab.RDFSLabel, "normalization policy "+p.String())
		str(pd, DCTNS+"title", p.Name)
		str(pd, OWLNS+"versionInfo", p.Version)
		str(pd, DCTNS+"identifier", p.Digest)
		add(pd, DCTNS+"source", pn)
		add(pd, vocab.ProvWasDerivedFrom, pn)
		if p.parser != "" {
			pa := sub("parser/" + strings.TrimPrefix(mintIRI("parser", p.parser, p.parserVersion).Value, model.IDBase+"parser/"))
			add(pd, DCTNS+"requires", pa)
			if !parsers[pa] {
				parsers[pa] = true
				types(pa, DCTNS+"Standard", vocab.ProvEntity)
				str(pa, vocab.RDFSLabel, "URL parser "+p.parser+" "+p.parserVersion)
				str(pa, DCTNS+"title", p.parser)
				str(pa, OWLNS+"versionInfo", p.parserVersion)
			}
		}
		d.trackingParams(pd, p, add, str, types)
	}

	// The content extractors whose evidence the data holds (pg:extractor
	// on each extraction and its evidence), each as the software it is.
	for _, v := range d.extractors {
		ex := sub("extractor/" + strings.TrimPrefix(mintIRI("extractor", v).Value, model.IDBase+"extractor/"))
		add(ds, DCTNS+"requires", ex)
		types(ex, vocab.ProvSoftwareAgent, vocab.ProvAgent)
		str(ex, vocab.RDFSLabel, "content extractor "+v)
		str(ex, OWLNS+"versionInfo", v)
	}

	for _, c := range conventions(d.redirectLimits) {
		cn := sub("convention/" + c.id)
		add(ds, DCTNS+"conformsTo", cn)
		types(cn, DCTNS+"Standard", vocab.ProvEntity)
		str(cn, DCTNS+"identifier", c.id)
		str(cn, DCTNS+"title", c.title)
		str(cn, DCTNS+"description", c.description)
		for _, v := range c.values {
			add(cn, vocab.RDFNS+"value", v)
		}
	}

	cb := sub("codebook")
	add(ds, DCTNS+"conformsTo", cb)
	types(cb, DCTNS+"Standard", SKOSNS+"ConceptScheme", vocab.ProvPlan, vocab.ProvEntity)
	str(cb, DCTNS+"title", "verdicts of review groups")
	str(cb, DCTNS+"description", codebookRules)
	for _, v := range model.Verdicts {
		vn := sub("codebook/" + v.Name)
		add(cb, SKOSNS+"hasTopConcept", vn)
		types(vn, SKOSNS+"Concept", vocab.ProvEntity)
		add(vn, SKOSNS+"inScheme", cb)
		str(vn, SKOSNS+"notation", v.Name)
		str(vn, SKOSNS+"prefLabel", v.Label)
		str(vn, SKOSNS+"definition", v.Definition)
	}
	// The relations between groups that grouping derives, each a concept
	// of the codebook too: a reviewer reads what a relation means here.
	for _, r := range model.GroupRelationKinds {
		rn := sub("codebook/relation/" + r.Name)
		add(cb, SKOSNS+"hasTopConcept", rn)
		types(rn, SKOSNS+"Concept", vocab.ProvEntity)
		add(rn, SKOSNS+"inScheme", cb)
		str(rn, SKOSNS+"notation", r.Name)
		str(rn, SKOSNS+"prefLabel", "relation: "+r.Name)
		str(rn, SKOSNS+"definition", r.Description)
	}
	return groupBySubject(out)
}

// groupBySubject orders quads by subject, subjects in order of first
// appearance, keeping the order of each subject's quads: one Turtle block
// or JSON-LD node object per node of the description.
func groupBySubject(quads []graph.Quad) []graph.Quad {
	first := map[graph.Term]int{}
	for i, q := range quads {
		if _, ok := first[q.S]; !ok {
			first[q.S] = i
		}
	}
	slices.SortStableFunc(quads, func(a, b graph.Quad) int { return first[a.S] - first[b.S] })
	return quads
}

// trackingParams describes the query parameters policy p removes, read
// from its stored text: the global list, then each host rule's own.
func (d *description) trackingParams(pd graph.Term, p policyInfo, add func(graph.Term, string, graph.Term), str func(graph.Term, string, string), types func(graph.Term, ...string)) {
	if p.text == "" {
		str(pd, vocab.RDFSComment, "The database does not hold this policy's text, so its tracking parameters cannot be listed.")
		return
	}
	pol, err := normalize.ParsePolicy([]byte(p.text), "database:"+p.Name)
	if err != nil {
		str(pd, vocab.RDFSComment, "This build cannot read the policy's stored text ("+err.Error()+"), so its tracking parameters cannot be listed.")
		return
	}
	n := 0
	param := func(r normalize.ParamRule, scope string) {
		n++
		tp := graph.IRI(pd.Value + "/tracking-parameter/" + strconv.Itoa(n))
		add(pd, SKOSNS+"hasTopConcept", tp)
		types(tp, SKOSNS+"Concept", vocab.ProvEntity)
		add(tp, SKOSNS+"inScheme", pd)
		str(tp, SKOSNS+"notation", r.Name)
		str(tp, SKOSNS+"definition", r.Reason)
		str(tp, SKOSNS+"scopeNote", scope)
	}
	for _, r := range pol.TrackingParams() {
		param(r, "removed from every URL (a name ending in * matches every name with that prefix)")
	}
	for _, h := range pol.HostRules() {
		for _, r := range h.DropParams {
			param(r, "removed on hosts "+strings.Join(h.Hosts, ", ")+" only (host rule "+h.Name+")")
		}
	}
	str(pd, DCTNS+"description", fmt.Sprintf("%s removes %d query parameters as tracking-only, each listed with its reason; every other parameter is kept.", p.Name, n))
}
