package render

import (
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/provgraph/provgraph/internal/query"
	"github.com/provgraph/provgraph/internal/review"
)

// LineageText writes the indented report, one block per citation.
func LineageText(w io.Writer, ls []*query.Lineage) error {
	for i, l := range ls {
		if i > 0 {
			fmt.Fprintln(w)
		}
		p := reportPrinter{w: w}
		fmt.Fprintf(w, "citation %s\n", QuoteIfNeeded(l.CitationID))
		p.text(1, "engine", l.Engine)
		answer := EscapeText(l.AnswerID)
		if l.Position != "" {
			answer += ", position " + EscapeText(string(l.Position))
		}
		p.field(1, "answer", answer)
		p.text(1, "question", l.Question)
		p.text(1, "observed at", l.ObservedAt)
		p.value(1, "raw URL", l.RawURL)
		frag := "(none)"
		if l.Fragment != nil {
			frag = ShowValue(*l.Fragment)
		}
		p.field(1, "fragment", frag)
		if l.BaseURL != "" {
			p.value(1, "base URL", l.BaseURL)
		}

		fmt.Fprintf(w, "\n  normalization under %s (%s)\n", EscapeText(l.Policy.String()), EscapeText(l.Policy.Digest))
		if n := l.Normalization; n == nil {
			under := "no policy"
			if len(l.NormalizedUnder) > 0 {
				under = strings.Join(EscapeAll(l.NormalizedUnder), ", ")
			}
			fmt.Fprintf(w, "    none: this citation was normalized under %s\n", under)
		} else {
			switch {
			case len(n.Steps) == 0 && n.Error != nil:
				p.field(2, "steps", "none")
			case len(n.Steps) == 0:
				p.field(2, "steps", "none (the raw URL was already in normal form)")
			default:
				fmt.Fprintf(w, "    steps:\n")
				rw, bw := 0, 0
				for _, s := range n.Steps {
					rw = max(rw, utf8.RuneCountInString(EscapeText(string(s.Rule))))
					bw = max(bw, utf8.RuneCountInString(ShowValue(s.Before)))
				}
				for _, s := range n.Steps {
					b := ShowValue(s.Before)
					fmt.Fprintf(w, "      %-*s  %s%s -> %s\n", rw, EscapeText(string(s.Rule)), b, strings.Repeat(" ", bw-utf8.RuneCountInString(b)), ShowValue(s.After))
				}
			}
			if n.Error != nil {
				p.field(2, "rejected", EscapeText(n.Error.Code)+": "+EscapeLine(n.Error.Message))
			} else {
				p.value(2, "key", l.Key)
				p.text(2, "compare", n.Compare)
				if n.Parsed != "" {
					p.value(2, "parsed", n.Parsed)
				}
				if len(n.RemovedParams) > 0 {
					p.field(2, "removed", strings.Join(EscapeAll(n.RemovedParams), "&"))
				}
				p.text(2, "host rule", n.HostRule)
			}
		}

		if len(l.Retrievals) == 0 {
			fmt.Fprintf(w, "\n  retrieval: none recorded\n")
		}
		for j, r := range l.Retrievals {
			at := EscapeText(r.RetrievedAt)
			if at == "" {
				at = "(time not recorded)"
			}
			if len(l.Retrievals) > 1 {
				fmt.Fprintf(w, "\n  retrieval %d at %s\n", j+1, at)
			} else {
				fmt.Fprintf(w, "\n  retrieval at %s\n", at)
			}
			if len(r.Hops) == 0 {
				p.field(2, "hops", "none")
			} else {
				fmt.Fprintf(w, "    hops:\n")
				for _, h := range r.Hops {
					fmt.Fprintf(w, "      %d. %s %s -> %s", h.Index+1, EscapeText(string(h.Status)), QuoteIfNeeded(h.From), QuoteIfNeeded(h.To))
					if h.At != "" {
						fmt.Fprintf(w, " at %s", EscapeText(h.At))
					}
					if h.CrossesHost {
						fmt.Fprintf(w, " (crosses host)")
					}
					fmt.Fprintln(w)
				}
			}
			p.text(2, "final status", string(r.FinalStatus))
			if r.FinalURL != "" {
				p.value(2, "resolved URL", r.FinalURL)
			}
			p.text(2, "content hash", r.ContentHash)
			p.text(2, "content type", r.ContentType)
			p.text(2, "snapshot", r.SnapshotRef)
			p.text(2, "outcome", r.Outcome)
			p.text(2, "outcome error", r.OutcomeError)
			for _, c := range r.Canonicals {
				p.field(2, "canonical", QuoteIfNeeded(c.URL)+" ("+EscapeText(c.Source)+")")
			}
			if r.CanonicalDropped != "" {
				p.field(2, "canonicals dropped", EscapeText(string(r.CanonicalDropped))+" more declared than were kept (100 per source)")
			}
			for _, x := range r.Extractions {
				fmt.Fprintf(w, "    extraction by %s:\n", EscapeText(x.Extractor))
				p.text(3, "capture", x.CaptureRef)
				p.text(3, "media type", x.MediaType)
				p.text(3, "method", x.Method)
				p.text(3, "title", x.Title)
				p.text(3, "language", x.Language)
				for _, d := range x.Dates {
					p.field(3, "declared date", EscapeText(d.Value)+" ("+EscapeText(d.Source)+")")
				}
				if x.DatesDisagree {
					p.field(3, "dates", "disagree")
				}
				p.text(3, "text digest", x.TextDigest)
				p.text(3, "SimHash", x.SimHash)
				p.field(3, "words", fmt.Sprint(x.Words))
				p.text(3, "soft error", x.SoftError)
				p.text(3, "problem", x.Problem)
			}
		}
		if l.Passage != nil {
			fmt.Fprintf(w, "\n  cited passage: %s\n", PassageText(l.Passage))
		}

		if len(l.Relations) == 0 {
			fmt.Fprintf(w, "\n  relations of the raw URL: none\n")
		} else {
			fmt.Fprintf(w, "\n  relations of the raw URL:\n")
			for _, r := range l.Relations {
				attrs := []string{EscapeText(r.Evidence)}
				if r.Format != "" {
					attrs = append(attrs, "format "+EscapeText(r.Format))
				}
				if r.CapturedAt != "" {
					attrs = append(attrs, "captured "+EscapeText(r.CapturedAt))
				}
				fmt.Fprintf(w, "    %s %s (%s)\n", EscapeText(r.Type), QuoteIfNeeded(r.Target), strings.Join(attrs, ", "))
			}
		}

		if g := l.Group; g == nil {
			fmt.Fprintf(w, "\n  group: none: %s\n", EscapeLine(l.Ungrouped))
		} else {
			from := EscapeText(g.Scope)
			if g.Scope == query.ScopeView {
				from = "grouping view"
			}
			fmt.Fprintf(w, "\n  group %s (computed from the %s: %s read)\n", EscapeText(g.ID), from, Plural(g.Read, "citation"))
			p.text(2, "verdict", g.Verdict)
			p.field(2, "members", fmt.Sprint(g.Members))
			p.value(2, "key", g.Key)
			if len(g.Keys) > 0 {
				keys := make([]string, len(g.Keys))
				for i, k := range g.Keys {
					keys[i] = QuoteIfNeeded(k)
				}
				p.field(2, "keys", strings.Join(keys, " "))
			}
			fmt.Fprintf(w, "    why:\n")
			for _, r := range g.Reasons {
				fmt.Fprintf(w, "      %s\n", EscapeLine(r))
			}
			// The group's relations, as groups lists them.
			if len(g.Relations) == 0 {
				p.field(2, "relations", "none")
			} else {
				fmt.Fprintf(w, "    relations:\n")
				for _, r := range g.Relations {
					to := EscapeText(r.To)
					if r.To == "" {
						to = QuoteIfNeeded(r.ToURL) + " (not cited)"
					}
					review := ""
					if r.Review {
						review = " [review]"
					}
					fmt.Fprintf(w, "      %s -> %s%s\n        %s\n", EscapeText(r.Type), to, review, EscapeLine(r.Evidence))
				}
			}
		}
	}
	return nil
}

// reportPrinter prints "label: value" lines with the values aligned.
type reportPrinter struct{ w io.Writer }

// field prints a line when value is not empty. The value must have been
// escaped (EscapeText, QuoteIfNeeded) by the caller.
func (p reportPrinter) field(depth int, label, value string) {
	if value == "" {
		return
	}
	// At least one space after the label, however long it is.
	fmt.Fprintf(p.w, "%s%-13s %s\n", strings.Repeat("  ", depth), label+":", value)
}

// text prints a stored text, escaped when it holds control characters.
func (p reportPrinter) text(depth int, label, value string) {
	p.field(depth, label, EscapeText(value))
}

// value prints a stored text such as a URL, quoted when it holds spaces or
// control characters, "(empty)" when empty.
func (p reportPrinter) value(depth int, label, value string) {
	p.field(depth, label, ShowValue(value))
}

// PROV's usual colours (the W3C PROV-O and PROV-DM diagrams): entities are
// yellow ellipses, activities blue rectangles, agents orange houses.
const (
	dotEntity   = `shape=ellipse, style=filled, fillcolor="#FFFC87", color="#808080"`
	dotActivity = `shape=box, style=filled, fillcolor="#9FB1FC", color="#0000FF"`
	dotAgent    = `shape=house, style=filled, fillcolor="#FED37F", color="#000000"`
	dotDerived  = `shape=note, style="filled,dashed", fillcolor="#EEEEEE", color="#808080"`
)

// dotGraph collects the nodes and edges of a lineage graph. Nodes are
// identified by what identifies them in the database (ontology/MODEL.md), so
// the citations of one raw URL share its raw URL, normalization and key
// nodes, and named n1, n2, ... in order of appearance.
type dotGraph struct {
	ids   map[string]string
	nodes []string
	edges []string
	seen  map[string]bool
}

// node adds a node once and returns its name.
func (g *dotGraph) node(identity, style, label, tooltip string) string {
	if id, ok := g.ids[identity]; ok {
		return id
	}
	id := fmt.Sprintf("n%d", len(g.ids)+1)
	g.ids[identity] = id
	g.nodes = append(g.nodes, fmt.Sprintf("  %s [%s, label=%s, tooltip=%s];", id, style, dotQuote(label), dotQuote(tooltip)))
	return id
}

// edge adds an edge once; the label is the relation's name.
func (g *dotGraph) edge(from, to, label string, attrs ...string) {
	key := from + " " + to + " " + label
	if g.seen[key] {
		return
	}
	g.seen[key] = true
	a := append([]string{"label=" + dotQuote(label)}, attrs...)
	g.edges = append(g.edges, fmt.Sprintf("  %s -> %s [%s];", from, to, strings.Join(a, ", ")))
}

// LineageDOT draws the lineages as one Graphviz digraph in PROV style.
// Edges point from the later thing to the earlier one, as PROV relations
// read: the key wasGeneratedBy the normalization, which used the raw URL.
// orig are the lineages as stored, ls as shown (the same, or redacted by
// --redact-userinfo): nodes are identified by the stored values, so that
// two URLs that differ only in their credentials stay two nodes.
func LineageDOT(w io.Writer, ls, orig []*query.Lineage) error {
	return LineageDOTDecisions(w, ls, orig, nil)
}

// LineageDOTDecisions is LineageDOT with the decisions about each
// citation (of, which may be nil): each adjudication a PROV entity that
// adjudicates the citation and is attributed to its reviewer.
func LineageDOTDecisions(w io.Writer, ls, orig []*query.Lineage, of func(citationID string) []*review.Decision) error {
	g := &dotGraph{ids: map[string]string{}, seen: map[string]bool{}}
	var titles []string
	for i, l := range ls {
		o := orig[i]
		titles = append(titles, EscapeLine(l.CitationID))
		pol := l.Policy
		cit := g.node("citation\x00"+l.CitationID, dotEntity, "citation\n"+dotText(l.CitationID),
			fmt.Sprintf("citation %s\nobserved at %s\nquestion: %s", EscapeLine(l.CitationID), EscapeLine(l.ObservedAt), EscapeLine(l.Question)))
		if l.Engine != "" || l.AnswerID != "" {
			ans := g.node("answer\x00"+l.Engine+"\x00"+l.AnswerID, dotEntity, "answer\n"+dotText(l.AnswerID), "answer "+EscapeLine(l.AnswerID))
			g.edge(cit, ans, "inAnswer")
			if l.Engine != "" {
				eng := g.node("engine\x00"+l.Engine, dotAgent, dotText(l.Engine)+"\n(answer engine)", "answer engine "+EscapeLine(l.Engine))
				g.edge(ans, eng, "wasAttributedTo")
			}
		}
		rawLabel := "raw URL\n" + dotText(l.RawURL)
		if l.Fragment != nil {
			rawLabel += "\nfragment #" + dotText(*l.Fragment)
		}
		raw := g.node("raw\x00"+o.RawURL, dotEntity, rawLabel, EscapeLine(l.RawURL))
		g.edge(cit, raw, "cites")

		if n := l.Normalization; n != nil {
			normID := "norm\x00" + o.RawURL + "\x00" + o.BaseURL + "\x00" + pol.Digest
			label := "normalization\n" + Plural(len(n.Steps), "step")
			if n.Error != nil {
				label += "\nrejected: " + n.Error.Code
			}
			var tip []string
			for _, s := range n.Steps {
				tip = append(tip, fmt.Sprintf("%s: %s -> %s", s.Rule, ShowValue(s.Before), ShowValue(s.After)))
			}
			if n.Error != nil {
				tip = append(tip, "rejected: "+EscapeLine(n.Error.Message))
			}
			if len(tip) == 0 {
				tip = append(tip, "no step: the raw URL was already in normal form")
			}
			if l.BaseURL != "" {
				tip = append(tip, "base URL "+EscapeLine(l.BaseURL))
			}
			nrm := g.node(normID, dotActivity, label, strings.Join(tip, "\n"))
			g.edge(cit, nrm, "normalizedAs")
			g.edge(nrm, raw, "used")
			agent := g.node("agent\x00provgraph", dotAgent, "provgraph", "provgraph, the software agent of every normalization")
			g.edge(nrm, agent, "wasAssociatedWith")
			declared, _, _ := strings.Cut(pol.Version, "+")
			plan := g.node("policy\x00"+pol.Digest, dotEntity, "policy (plan)\n"+dotText(pol.Name)+"\nversion "+dotText(declared), EscapeLine(pol.String())+"\n"+EscapeLine(pol.Digest))
			g.edge(nrm, plan, "hadPlan")
			if n.Error == nil {
				tip := "key " + EscapeLine(l.Key) + "\ncompare: " + EscapeLine(n.Compare)
				if len(n.RemovedParams) > 0 {
					tip += "\nremoved: " + EscapeLine(strings.Join(n.RemovedParams, "&"))
				}
				if n.HostRule != "" {
					tip += "\nhost rule: " + EscapeLine(n.HostRule)
				}
				key := g.node("key\x00"+normID, dotEntity, "comparison key\n"+dotText(l.Key), tip)
				g.edge(key, nrm, "wasGeneratedBy")
				g.edge(key, raw, "wasDerivedFrom")
				if gr := l.Group; gr != nil {
					grp := g.node("group\x00"+gr.ID, dotDerived,
						fmt.Sprintf("review group %s\n%s\n%s", gr.ID, gr.Verdict, Plural(gr.Members, "member")),
						"derived, not stored: "+strings.Join(escapeLines(gr.Reasons), "\n"))
					g.edge(key, grp, "inGroup", "style=dashed", `color="#808080"`)
				}
			}
		}

		for j, r := range l.Retrievals {
			or := o.Retrievals[j]
			label := "retrieval"
			if r.RetrievedAt != "" {
				label += "\n" + dotText(r.RetrievedAt)
			}
			if r.FinalStatus != "" {
				label += "\nstatus " + dotText(string(r.FinalStatus))
			}
			if r.ContentHash != "" {
				label += "\n" + dotText(shorten(r.ContentHash, 24))
			}
			tip := []string{"retrieval " + EscapeLine(r.RetrievedAt)}
			for _, s := range [][2]string{{"content hash", r.ContentHash}, {"content type", r.ContentType}, {"snapshot", r.SnapshotRef}, {"outcome", r.Outcome}, {"outcome error", r.OutcomeError}} {
				if s[1] != "" {
					tip = append(tip, s[0]+": "+EscapeLine(s[1]))
				}
			}
			ret := g.node("retrieval\x00"+r.Node, dotActivity, label, strings.Join(tip, "\n"))
			g.edge(cit, ret, "retrievedIn")
			g.edge(ret, raw, "used")
			prev := ""
			for _, h := range r.Hops {
				label := fmt.Sprintf("redirect %d: %s", h.Index+1, dotText(string(h.Status)))
				if h.CrossesHost {
					label += " (crosses host)"
				}
				label += "\n" + dotText(h.From) + "\n→ " + dotText(h.To)
				hop := g.node(fmt.Sprintf("hop\x00%s\x00%d", r.Node, h.Index), dotActivity, label,
					EscapeLine(fmt.Sprintf("%s %s -> %s at %s", h.Status, h.From, h.To, h.At)))
				g.edge(ret, hop, "hop")
				if prev != "" {
					g.edge(hop, prev, "wasInformedBy")
				}
				prev = hop
			}
			declarer := raw
			if r.FinalURL != "" {
				res := g.node("resolved\x00"+or.FinalURL, dotEntity, "resolved URL\n"+dotText(r.FinalURL), EscapeLine(r.FinalURL))
				g.edge(res, ret, "wasGeneratedBy (resolvedTo)")
				declarer = res
			}
			for k, c := range r.Canonicals {
				decl := g.node("canonical\x00"+r.Node+"\x00"+or.Canonicals[k].URL+"\x00"+c.Source, dotEntity,
					"canonical ("+dotText(c.Source)+")\n"+dotText(c.URL), EscapeLine(c.URL+" ("+c.Source+")"))
				g.edge(decl, ret, "wasGeneratedBy")
				g.edge(decl, declarer, "declaredBy")
			}
		}

		for j, r := range l.Relations {
			res := g.node("resource\x00"+o.Relations[j].Target, dotEntity, "related resource\n"+dotText(r.Target), EscapeLine(r.Target))
			attrs := []string{r.Evidence}
			if r.Format != "" {
				attrs = append(attrs, r.Format)
			}
			if r.CapturedAt != "" {
				attrs = append(attrs, "captured "+r.CapturedAt)
			}
			g.edge(raw, res, EscapeLine(relationEdge(r.Type)+" ("+strings.Join(attrs, ", ")+")"))
		}
	}

	for _, l := range ls {
		if of == nil {
			break
		}
		cit := g.ids["citation\x00"+l.CitationID]
		for _, d := range of(l.CitationID) {
			label := "adjudication " + dotText(d.ID) + "\n" + dotText(d.Decision)
			if d.Relation != "" {
				label += " " + dotText(d.Relation)
			}
			a := g.node("adjudication\x00"+d.ID, dotEntity, label, fmt.Sprintf("%s by %s at %s: %s", EscapeLine(d.Decision), EscapeLine(d.Reviewer), EscapeLine(d.At), EscapeLine(d.Rationale)))
			g.edge(a, cit, "adjudicates")
			who := g.node("reviewer\x00"+d.Reviewer, dotAgent, "reviewer\n"+dotText(d.Reviewer), "reviewer "+EscapeLine(d.Reviewer))
			g.edge(a, who, "wasAttributedTo")
		}
	}

	title := "lineage of " + strings.Join(titles, ", ")
	if len(ls) > 0 {
		title += "\npolicy " + EscapeLine(ls[0].Policy.String())
	}
	fmt.Fprintf(w, "digraph lineage {\n")
	fmt.Fprintf(w, "  graph [rankdir=BT, fontname=\"Helvetica\", fontsize=11, labelloc=t, label=%s];\n", dotQuote(title))
	fmt.Fprintf(w, "  node [fontname=\"Helvetica\", fontsize=10];\n")
	fmt.Fprintf(w, "  edge [fontname=\"Helvetica\", fontsize=9];\n")
	for _, n := range g.nodes {
		fmt.Fprintln(w, n)
	}
	for _, e := range g.edges {
		fmt.Fprintln(w, e)
	}
	fmt.Fprintln(w, "}")
	return nil
}

func Plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %s", n, plural(noun))
}

// plural is the plural of an English noun as the messages use them:
// "entry" becomes "entries" (a consonant before the y), "hash" "hashes",
// "run" "runs".
func plural(noun string) string {
	switch {
	case strings.HasSuffix(noun, "y") && len(noun) > 1 && !strings.ContainsRune("aeiou", rune(noun[len(noun)-2])):
		return noun[:len(noun)-1] + "ies"
	case strings.HasSuffix(noun, "s"), strings.HasSuffix(noun, "x"), strings.HasSuffix(noun, "sh"), strings.HasSuffix(noun, "ch"):
		return noun + "es"
	}
	return noun + "s"
}

// shorten cuts s to n characters with "…"; labels use it for hashes,
// whose full text is in the tooltip.
func shorten(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}

// relationEdge names the unqualified edge of a relation type (format_of:
// formatOf).
func relationEdge(typ string) string {
	if before, after, ok := strings.Cut(typ, "_"); ok && after != "" {
		return before + strings.ToUpper(after[:1]) + after[1:]
	}
	return typ
}

// dotLine and dotLines bound a label: long URLs are wrapped and cut, the
// full text goes in the tooltip.
const (
	dotLine  = 48
	dotLines = 3
)

// dotText wraps s into lines of at most dotLine characters, preferring to
// break after "/", "?" or "&", and cuts it after dotLines lines with "…".
// Invalid UTF-8 bytes are shown as \xNN and control characters as \uNNNN,
// so that nothing is silently dropped from the label.
func dotText(s string) string {
	s = EscapeLine(s)
	var lines []string
	for len(lines) < dotLines && s != "" {
		r := []rune(s)
		if len(r) <= dotLine {
			lines = append(lines, s)
			s = ""
			break
		}
		cut := dotLine
		for i := dotLine; i > dotLine/2; i-- {
			if strings.ContainsRune("/?&=.+", r[i-1]) {
				cut = i
				break
			}
		}
		lines = append(lines, string(r[:cut]))
		s = string(r[cut:])
	}
	if s != "" {
		lines[len(lines)-1] += "…"
	}
	return strings.Join(lines, "\n")
}

// escapeLines applies EscapeLine to each of ss.
func escapeLines(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = EscapeLine(s)
	}
	return out
}

// dotQuote makes a DOT double-quoted string whose text Graphviz shows as
// s, with "\n" in s starting a new centred line. In DOT strings a backslash
// starts an escape (\n, \l, \N, ...) and Graphviz replaces entity
// references such as "&amp;" in labels, so backslashes, quotes and "&" are
// escaped; other characters outside printable UTF-8 have been made visible
// by dotText (tooltips get the same treatment here).
func dotQuote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, line := range strings.Split(s, "\n") {
		if b.Len() > 1 {
			b.WriteString(`\n`)
		}
		for _, r := range EscapeLine(line) {
			switch r {
			case '"':
				b.WriteString(`\"`)
			case '\\':
				b.WriteString(`\\`)
			case '&':
				b.WriteString("&amp;")
			default:
				b.WriteRune(r)
			}
		}
	}
	b.WriteByte('"')
	return b.String()
}
