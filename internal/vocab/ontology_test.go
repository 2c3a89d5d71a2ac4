package vocab_test

import (
	"bytes"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/knakk/rdf"

	"github.com/provgraph/provgraph/internal/testenv"
	"github.com/provgraph/provgraph/internal/vocab"
)

const (
	ttlPath   = "../../ontology/provgraph.ttl"
	modelPath = "../../ontology/MODEL.md"

	owlNS         = "http://www.w3.org/2002/07/owl#"
	owlClass      = owlNS + "Class"
	owlObjectProp = owlNS + "ObjectProperty"
	owlDataProp   = owlNS + "DatatypeProperty"
	owlOntology   = owlNS + "Ontology"
	owlUnionOf    = owlNS + "unionOf"
	owlVersion    = owlNS + "versionInfo"
	rdfFirst      = vocab.RDFNS + "first"
	rdfRest       = vocab.RDFNS + "rest"
	rdfNil        = vocab.RDFNS + "nil"
	rdfsSubClass  = vocab.RDFSNS + "subClassOf"
	rdfsSubProp   = vocab.RDFSNS + "subPropertyOf"
	rdfsDomain    = vocab.RDFSNS + "domain"
	rdfsRange     = vocab.RDFSNS + "range"
	ontologyIRI   = "https://w3id.org/provgraph/ns"
)

// provTerms are the PROV-O class and property names, from the cross
// references of https://www.w3.org/TR/prov-o/ (section 4.1 and 4.2). A prov:
// IRI outside this list is a typo that would still look like PROV.
var provTerms = strings.Fields(`
	Entity Activity Agent Collection EmptyCollection Bundle Person SoftwareAgent
	Organization Location Plan Influence EntityInfluence ActivityInfluence
	AgentInfluence Usage Generation Invalidation Start End Communication
	Derivation Revision Quotation PrimarySource Attribution Association
	Delegation InstantaneousEvent Role
	wasGeneratedBy wasDerivedFrom wasAttributedTo startedAtTime used
	wasInformedBy endedAtTime wasAssociatedWith actedOnBehalfOf alternateOf
	specializationOf generatedAtTime hadPrimarySource value wasQuotedFrom
	wasRevisionOf invalidatedAtTime wasInvalidatedBy hadMember wasStartedBy
	wasEndedBy invalidated influenced atLocation generated wasInfluencedBy
	qualifiedInfluence qualifiedGeneration qualifiedDerivation
	qualifiedPrimarySource qualifiedQuotation qualifiedRevision
	qualifiedAttribution qualifiedInvalidation qualifiedStart qualifiedUsage
	qualifiedCommunication qualifiedAssociation qualifiedEnd qualifiedDelegation
	influencer entity hadUsage hadGeneration activity agent hadPlan hadActivity
	atTime hadRole`)

// ontology is the parsed .ttl, indexed by subject.
type ontology struct {
	triples []rdf.Triple
	// props maps a subject (an IRI or "_:" and a blank node id) to its
	// predicates and their objects, in file order.
	props map[string]map[string][]rdf.Object
	// terms are the pg: subjects that have an rdf:type, in file order.
	terms []string
}

// key names a subject or object in ontology.props.
func key(t rdf.Term) string {
	if b, ok := t.(rdf.Blank); ok {
		return "_:" + b.String()
	}
	return t.String()
}

// loadOntology parses the .ttl with github.com/knakk/rdf, a parser that
// shares no code with the rapper and serdi checks below.
func loadOntology(t testing.TB) *ontology {
	t.Helper()
	f, err := os.Open(ttlPath)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	triples, err := rdf.NewTripleDecoder(f, rdf.Turtle).DecodeAll()
	if err != nil {
		t.Fatalf("knakk/rdf: parse %s: %v", ttlPath, err)
	}
	o := &ontology{triples: triples, props: map[string]map[string][]rdf.Object{}}
	for _, tr := range triples {
		s := key(tr.Subj)
		if o.props[s] == nil {
			o.props[s] = map[string][]rdf.Object{}
		}
		p := tr.Pred.String()
		if p == vocab.RDFType && strings.HasPrefix(s, vocab.NS) && len(o.props[s][p]) == 0 {
			o.terms = append(o.terms, s)
		}
		o.props[s][p] = append(o.props[s][p], tr.Obj)
	}
	return o
}

// objects returns the objects of s's p triples as keys.
func (o *ontology) objects(s, p string) []string {
	var out []string
	for _, obj := range o.props[s][p] {
		out = append(out, key(obj))
	}
	return out
}

// kind returns the single OWL type of a pg: term.
func (o *ontology) kind(s string) string {
	if types := o.objects(s, vocab.RDFType); len(types) == 1 {
		return types[0]
	}
	return ""
}

// members returns the classes a domain or range names: the class itself, or
// the members of its owl:unionOf list.
func (o *ontology) members(t testing.TB, c string) []string {
	t.Helper()
	if !strings.HasPrefix(c, "_:") {
		return []string{c}
	}
	u := o.objects(c, owlUnionOf)
	if len(u) != 1 {
		t.Fatalf("blank node %s is not an owl:unionOf class", c)
	}
	var out []string
	for n := u[0]; n != rdfNil; {
		first, rest := o.objects(n, rdfFirst), o.objects(n, rdfRest)
		if len(first) != 1 || len(rest) != 1 {
			t.Fatalf("malformed RDF list at %s", n)
		}
		out = append(out, first[0])
		n = rest[0]
	}
	return out
}

// provAncestor follows rdfs:subClassOf or rdfs:subPropertyOf from s and
// returns the first prov: term it reaches, or "".
func (o *ontology) provAncestor(s, sub string) string {
	seen := map[string]bool{}
	queue := []string{s}
	for len(queue) > 0 {
		n := queue[0]
		queue = queue[1:]
		if seen[n] {
			continue
		}
		seen[n] = true
		for _, sup := range o.objects(n, sub) {
			if strings.HasPrefix(sup, vocab.ProvNS) {
				return sup
			}
			queue = append(queue, sup)
		}
	}
	return ""
}

func local(iri string) string { return strings.TrimPrefix(iri, vocab.NS) }

func TestOntologyHeader(t *testing.T) {
	o := loadOntology(t)
	if len(o.triples) == 0 {
		t.Fatal("no triples")
	}
	h := o.props[ontologyIRI]
	if got := o.objects(ontologyIRI, vocab.RDFType); !slices.Equal(got, []string{owlOntology}) {
		t.Errorf("<%s> rdf:type = %v, want owl:Ontology", ontologyIRI, got)
	}
	for _, p := range []string{vocab.RDFSLabel, vocab.RDFSComment} {
		if len(h[p]) != 1 {
			t.Errorf("ontology header has %d %s, want 1", len(h[p]), p)
		}
	}
	if v := o.objects(ontologyIRI, owlVersion); !slices.Equal(v, []string{"1"}) {
		t.Errorf("owl:versionInfo = %q, want [\"1\"]", v)
	}
}

// TestOntologyRapper parses the .ttl with Raptor (Debian raptor2-utils) and
// checks that it reads as many triples as knakk/rdf.
func TestOntologyRapper(t *testing.T) {
	if _, err := exec.LookPath("rapper"); err != nil {
		testenv.MissingTool(t, "rapper not installed (Debian package raptor2-utils); skipping the Raptor Turtle check")
	}
	out, err := exec.Command("rapper", "-i", "turtle", "-c", ttlPath).CombinedOutput()
	if err != nil {
		t.Fatalf("rapper -i turtle -c %s: %v\n%s", ttlPath, err, out)
	}
	m := regexp.MustCompile(`returned (\d+) triples`).FindSubmatch(out)
	if m == nil {
		t.Fatalf("rapper printed no triple count:\n%s", out)
	}
	if n, _ := strconv.Atoi(string(m[1])); n != len(loadOntology(t).triples) {
		t.Errorf("rapper read %d triples, knakk/rdf %d", n, len(loadOntology(t).triples))
	}
}

// TestOntologySerdi parses the .ttl with Serd (Debian serdi) and checks that
// its N-Triples output holds the same ground triples as knakk/rdf read.
func TestOntologySerdi(t *testing.T) {
	if _, err := exec.LookPath("serdi"); err != nil {
		testenv.MissingTool(t, "serdi not installed (Debian package serdi); skipping the Serd Turtle check")
	}
	var stderr bytes.Buffer
	cmd := exec.Command("serdi", "-i", "turtle", "-o", "ntriples", ttlPath)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil || stderr.Len() > 0 {
		t.Fatalf("serdi -i turtle %s: %v\n%s", ttlPath, err, stderr.Bytes())
	}
	serd, err := rdf.NewTripleDecoder(bytes.NewReader(out), rdf.NTriples).DecodeAll()
	if err != nil {
		t.Fatalf("reading serdi's N-Triples: %v", err)
	}
	if len(serd) != len(loadOntology(t).triples) {
		t.Errorf("serdi read %d triples, knakk/rdf %d", len(serd), len(loadOntology(t).triples))
	}
	ground := func(ts []rdf.Triple) []string {
		var out []string
		for _, tr := range ts {
			if tr.Subj.Type() != rdf.TermBlank && tr.Obj.Type() != rdf.TermBlank {
				out = append(out, tr.Serialize(rdf.NTriples))
			}
		}
		slices.Sort(out)
		return out
	}
	if a, b := ground(serd), ground(loadOntology(t).triples); !slices.Equal(a, b) {
		for _, s := range a {
			if !slices.Contains(b, s) {
				t.Errorf("only serdi read: %s", s)
			}
		}
		for _, s := range b {
			if !slices.Contains(a, s) {
				t.Errorf("only knakk/rdf read: %s", s)
			}
		}
	}
}

// TestTermsDocumented checks that every pg: term is defined once, with one
// OWL type, one non-empty rdfs:label and one non-empty rdfs:comment.
func TestTermsDocumented(t *testing.T) {
	o := loadOntology(t)
	if len(o.terms) == 0 {
		t.Fatal("no pg: terms")
	}
	labels := map[string]string{}
	for _, s := range o.terms {
		if types := o.objects(s, vocab.RDFType); len(types) != 1 || !slices.Contains([]string{owlClass, owlObjectProp, owlDataProp}, types[0]) {
			t.Errorf("pg:%s rdf:type = %v, want exactly one of owl:Class, owl:ObjectProperty, owl:DatatypeProperty (a second type triple means a second definition)", local(s), types)
		}
		for _, p := range []string{vocab.RDFSLabel, vocab.RDFSComment} {
			objs := o.props[s][p]
			if len(objs) != 1 {
				t.Errorf("pg:%s has %d %s, want 1", local(s), len(objs), p)
				continue
			}
			lit, ok := objs[0].(rdf.Literal)
			if !ok || strings.TrimSpace(lit.String()) == "" {
				t.Errorf("pg:%s %s is empty or not a literal", local(s), p)
			}
		}
		if len(o.props[s][vocab.RDFSLabel]) == 1 {
			l := strings.ToLower(o.props[s][vocab.RDFSLabel][0].String())
			if prev, ok := labels[l]; ok {
				t.Errorf("pg:%s and pg:%s share the label %q", prev, local(s), l)
			}
			labels[l] = local(s)
		}
	}
}

// TestNoTermDefinedTwice checks that no two terms differ only in case, which
// would give them the same Go constant and confuse every reader of a query.
func TestNoTermDefinedTwice(t *testing.T) {
	seen := map[string]string{}
	for _, s := range loadOntology(t).terms {
		k := strings.ToLower(local(s))
		if prev, ok := seen[k]; ok {
			t.Errorf("pg:%s and pg:%s differ only in case", prev, local(s))
		}
		seen[k] = local(s)
	}
}

// TestTermsUnderPROV checks that every class and object property reaches a
// PROV-O term through rdfs:subClassOf or rdfs:subPropertyOf, and that every
// datatype property either does or has a domain whose classes all do.
func TestTermsUnderPROV(t *testing.T) {
	o := loadOntology(t)
	for _, s := range o.terms {
		switch o.kind(s) {
		case owlClass:
			if o.provAncestor(s, rdfsSubClass) == "" {
				t.Errorf("class pg:%s is not a subclass of any prov: class", local(s))
			}
		case owlObjectProp:
			if o.provAncestor(s, rdfsSubProp) == "" {
				t.Errorf("object property pg:%s is not a subproperty of any prov: property", local(s))
			}
		case owlDataProp:
			if o.provAncestor(s, rdfsSubProp) != "" {
				continue
			}
			for _, d := range o.objects(s, rdfsDomain) {
				for _, c := range o.members(t, d) {
					if o.provAncestor(c, rdfsSubClass) == "" {
						t.Errorf("datatype property pg:%s has no prov: super-property and its domain class %s is not under PROV", local(s), c)
					}
				}
			}
		}
	}
}

// TestProvTermsExist checks every prov: IRI in the .ttl and in external.go
// against the PROV-O term list, so that a misspelt super-term fails.
func TestProvTermsExist(t *testing.T) {
	check := func(where, iri string) {
		if name, ok := strings.CutPrefix(iri, vocab.ProvNS); ok && !slices.Contains(provTerms, name) {
			t.Errorf("%s: %s is not a PROV-O term", where, iri)
		}
	}
	for _, tr := range loadOntology(t).triples {
		for _, x := range []rdf.Term{tr.Subj, tr.Pred, tr.Obj} {
			if iri, ok := x.(rdf.IRI); ok {
				check(ttlPath, iri.String())
			}
		}
	}
	for _, iri := range []string{
		vocab.ProvEntity, vocab.ProvActivity, vocab.ProvAgent, vocab.ProvSoftwareAgent, vocab.ProvPlan,
		vocab.ProvInfluence, vocab.ProvAssociation, vocab.ProvUsed, vocab.ProvWasGeneratedBy,
		vocab.ProvWasDerivedFrom, vocab.ProvWasAttributedTo, vocab.ProvWasAssociatedWith,
		vocab.ProvQualifiedAssociation, vocab.ProvAgentProp, vocab.ProvHadPlan, vocab.ProvStartedAtTime,
		vocab.ProvEndedAtTime, vocab.ProvGeneratedAtTime, vocab.ProvAtTime, vocab.ProvAlternateOf,
		vocab.ProvSpecializationOf, vocab.ProvWasInformedBy, vocab.ProvCollection, vocab.ProvHadMember,
		vocab.ProvWasInfluencedBy,
	} {
		if !strings.HasPrefix(iri, vocab.ProvNS) {
			t.Errorf("external.go: %s is not in the prov: namespace", iri)
		}
		check("external.go", iri)
	}
}

// TestDomainsAndRanges checks that every property has one domain and one
// range made of defined pg: classes, that a datatype property's range is one
// of the four datatypes provgraph writes, and an object property's range
// is made of pg: classes.
func TestDomainsAndRanges(t *testing.T) {
	o := loadOntology(t)
	isClass := func(c string) bool { return strings.HasPrefix(c, vocab.NS) && o.kind(c) == owlClass }
	datatypes := []string{vocab.XSDString, vocab.XSDInteger, vocab.XSDDateTime, vocab.XSDBoolean}
	for _, s := range o.terms {
		k := o.kind(s)
		if k == owlClass {
			continue
		}
		dom, rng := o.objects(s, rdfsDomain), o.objects(s, rdfsRange)
		if len(dom) != 1 || len(rng) != 1 {
			t.Errorf("pg:%s has %d rdfs:domain and %d rdfs:range, want 1 and 1 (use owl:unionOf for several classes)", local(s), len(dom), len(rng))
			continue
		}
		for _, c := range o.members(t, dom[0]) {
			if !isClass(c) {
				t.Errorf("pg:%s domain %s is not a pg: class", local(s), c)
			}
		}
		switch k {
		case owlDataProp:
			if !slices.Contains(datatypes, rng[0]) {
				t.Errorf("pg:%s range %s, want one of %v", local(s), rng[0], datatypes)
			}
		case owlObjectProp:
			for _, c := range o.members(t, rng[0]) {
				if !isClass(c) {
					t.Errorf("pg:%s range %s is not a pg: class", local(s), c)
				}
			}
		}
	}
}

// TestOnlyKnownIRIs checks that every pg: IRI the file mentions is defined in
// it and that only the expected predicates are used, so that a misspelt
// pg:RawUrl or rdfs:subclassOf cannot pass unnoticed.
func TestOnlyKnownIRIs(t *testing.T) {
	o := loadOntology(t)
	preds := []string{
		vocab.RDFType, vocab.RDFSLabel, vocab.RDFSComment, rdfsSubClass, rdfsSubProp,
		rdfsDomain, rdfsRange, owlUnionOf, owlVersion, rdfFirst, rdfRest,
	}
	for _, tr := range o.triples {
		if p := tr.Pred.String(); !slices.Contains(preds, p) {
			t.Errorf("unexpected predicate %s", p)
		}
		for _, x := range []rdf.Term{tr.Subj, tr.Obj} {
			iri, ok := x.(rdf.IRI)
			if !ok || !strings.HasPrefix(iri.String(), vocab.NS) {
				continue
			}
			if len(o.objects(iri.String(), vocab.RDFType)) == 0 {
				t.Errorf("pg:%s is used but not defined", local(iri.String()))
			}
		}
	}
}

// TestModelTermsDefined checks that every pg: term MODEL.md mentions is
// defined in the .ttl, so that the two cannot drift apart.
func TestModelTermsDefined(t *testing.T) {
	model, err := os.ReadFile(modelPath)
	if err != nil {
		t.Fatal(err)
	}
	o := loadOntology(t)
	names := regexp.MustCompile(`\bpg:([A-Za-z][A-Za-z0-9]*)`).FindAllSubmatch(model, -1)
	if len(names) == 0 {
		t.Fatalf("%s mentions no pg: term", modelPath)
	}
	for _, m := range names {
		if o.kind(vocab.NS+string(m[1])) == "" {
			t.Errorf("%s mentions pg:%s, which %s does not define", modelPath, m[1], ttlPath)
		}
	}
}
