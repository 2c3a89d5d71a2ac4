package render

import (
	"bufio"
	"encoding/xml"
	"fmt"
	"io"
	"strings"

	"github.com/provgraph/provgraph/internal/query"
	"github.com/provgraph/provgraph/internal/review"
)

// svgNode is one box of the lineage picture.
type svgNode struct {
	col          int
	title, style string
	lines        []string
	full         string // the tooltip: every value whole
	x, y, h      int
}

// svgEdge joins two boxes, labelled.
type svgEdge struct {
	from, to int
	label    string
}

const (
	svgColW  = 330
	svgBoxW  = 240
	svgLineH = 15
	svgGap   = 18
)

// LineageSVG draws one citation's lineage as an SVG picture, without
// Graphviz: the answer and engine, the citation, its raw URL, its
// normalization and key, its group; each retrieval with its hops,
// resolved URL, canonicals and content; its relations; and the decisions
// about it (newest first). Every text is XML-escaped and shown through
// ShowValue, and cut to the box; the whole value is the box's tooltip.
func LineageSVG(w io.Writer, l *query.Lineage, ds []*review.Decision) error {
	var nodes []*svgNode
	var edges []svgEdge
	add := func(col int, style, title string, lines ...string) int {
		var full []string
		full = append(full, title)
		for _, s := range lines {
			full = append(full, s)
		}
		nodes = append(nodes, &svgNode{col: col, title: title, style: style, lines: lines, full: strings.Join(full, "\n")})
		return len(nodes) - 1
	}
	link := func(a, b int, label string) { edges = append(edges, svgEdge{a, b, label}) }

	answer := add(0, "answer", "answer "+ShowValue(l.AnswerID), "engine "+ShowValue(l.Engine), ShowValue(l.Question))
	cit := add(1, "citation", "citation "+ShowValue(l.CitationID), "position "+ShowValue(string(l.Position)), "observed "+ShowValue(l.ObservedAt))
	link(cit, answer, "in answer")
	raw := add(2, "raw", "raw URL (exact)", ShowValue(l.RawURL))
	if l.Fragment != nil {
		nodes[raw].lines = append(nodes[raw].lines, "fragment #"+ShowValue(*l.Fragment))
	}
	link(cit, raw, "cites")
	if n := l.Normalization; n != nil {
		lines := []string{"policy " + ShowValue(l.Policy.String())}
		if n.Error != nil {
			lines = append(lines, "rejected: "+ShowValue(n.Error.Code))
		} else {
			lines = append(lines, "key "+ShowValue(l.Key))
			for _, s := range n.Steps {
				lines = append(lines, "step "+string(s.Rule))
			}
		}
		nrm := add(3, "norm", "normalization", lines...)
		link(raw, nrm, "normalized as")
		if g := l.Group; g != nil {
			gr := add(4, "group", "group "+ShowValue(g.ID), ShowValue(g.Verdict), fmt.Sprintf("%d members", g.Members), "key "+ShowValue(g.Key))
			link(nrm, gr, "key in")
			for _, rel := range g.Relations {
				to := rel.To
				if to == "" {
					to = rel.ToURL
				}
				style := "relation"
				if rel.Review {
					style = "review"
				}
				rn := add(5, style, ShowValue(rel.Type), "-> "+ShowValue(to))
				link(gr, rn, "")
			}
		}
	}
	for i, r := range l.Retrievals {
		lines := []string{"at " + ShowValue(r.RetrievedAt)}
		if r.FinalStatus != "" {
			lines = append(lines, "status "+ShowValue(string(r.FinalStatus)))
		}
		if r.Outcome != "" {
			lines = append(lines, "outcome "+ShowValue(r.Outcome))
		}
		for _, h := range r.Hops {
			cross := ""
			if h.CrossesHost {
				cross = " cross-host"
			}
			lines = append(lines, fmt.Sprintf("hop %d %s%s", h.Index+1, ShowValue(string(h.Status)), cross), "  -> "+ShowValue(h.To))
		}
		if r.ContentHash != "" {
			lines = append(lines, "content "+ShowValue(r.ContentHash))
		}
		if r.SnapshotRef != "" {
			lines = append(lines, "capture "+ShowValue(r.SnapshotRef))
		}
		rt := add(2, "retrieval", fmt.Sprintf("retrieval %d", i+1), lines...)
		link(cit, rt, "retrieved in")
		if r.FinalURL != "" {
			res := add(3, "resolved", "resolved URL", ShowValue(r.FinalURL))
			link(rt, res, "resolved to")
		}
		for _, c := range r.Canonicals {
			cn := add(3, "canonical", "canonical ("+ShowValue(c.Source)+")", ShowValue(c.URL))
			link(rt, cn, "declares")
		}
	}
	for _, rel := range l.Relations {
		rn := add(2, "relation", ShowValue(rel.Type)+" ("+ShowValue(rel.Evidence)+")", ShowValue(rel.Target))
		link(cit, rn, "related")
	}
	for _, d := range ds {
		lines := []string{"by " + ShowValue(d.Reviewer), ShowValue(d.At), ShowValue(d.ID)}
		if d.Relation != "" {
			lines = append(lines, ShowValue(d.Relation))
		}
		if d.Rationale != "" {
			lines = append(lines, ShowValue(d.Rationale))
		}
		dn := add(0, "decision", "decision: "+ShowValue(d.Decision), lines...)
		link(dn, cit, "adjudicates")
	}

	// Place the boxes: each column fills from the top.
	next := map[int]int{}
	maxY, maxCol := 0, 0
	for _, n := range nodes {
		n.x = 10 + n.col*svgColW
		n.y = next[n.col] + 10
		n.h = 24 + svgLineH*len(n.lines)
		next[n.col] = n.y + n.h + svgGap
		maxY = max(maxY, n.y+n.h)
		maxCol = max(maxCol, n.col)
	}
	width, height := 20+(maxCol+1)*svgColW, maxY+20

	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 %d %d" width="%d" height="%d" font-family="sans-serif" font-size="11" role="img" aria-label="lineage of citation %s">`+"\n", width, height, width, height, xmlText(l.CitationID))
	bw.WriteString(`<defs><marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="#6b7785"/></marker></defs>` + "\n")
	for _, e := range edges {
		a, b := nodes[e.from], nodes[e.to]
		x1, y1 := a.x+svgBoxW, a.y+12
		x2, y2 := b.x, b.y+12
		if b.col < a.col {
			x1, x2 = a.x, b.x+svgBoxW
		} else if b.col == a.col {
			x1, y1, x2, y2 = a.x+20, a.y+a.h, b.x+20, b.y
		}
		mx := (x1 + x2) / 2
		fmt.Fprintf(bw, `<path d="M%d,%d C%d,%d %d,%d %d,%d" fill="none" stroke="#8a96a3" marker-end="url(#arrow)"/>`, x1, y1, mx, y1, mx, y2, x2, y2)
		if e.label != "" {
			fmt.Fprintf(bw, `<text x="%d" y="%d" fill="#5b6670" font-size="10" text-anchor="middle">%s</text>`, mx, (y1+y2)/2-3, xmlText(e.label))
		}
		bw.WriteString("\n")
	}
	fills := map[string]string{
		"answer": "#eef2f7", "citation": "#dbe9f8", "raw": "#fff8d9", "norm": "#eaf5ea", "group": "#e7e1f5",
		"retrieval": "#f2f2f2", "resolved": "#e6f4f1", "canonical": "#f6efe4", "relation": "#f4f4f4", "review": "#fde2e1", "decision": "#dff3e4",
	}
	for _, n := range nodes {
		fmt.Fprintf(bw, `<g class="node %s"><title>%s</title><rect x="%d" y="%d" width="%d" height="%d" rx="5" fill="%s" stroke="#8a96a3"/>`, n.style, xmlText(n.full), n.x, n.y, svgBoxW, n.h, fills[n.style])
		fmt.Fprintf(bw, `<text x="%d" y="%d" font-weight="bold">%s</text>`, n.x+8, n.y+16, xmlText(shorten(n.title, 38)))
		for i, s := range n.lines {
			fmt.Fprintf(bw, `<text x="%d" y="%d">%s</text>`, n.x+8, n.y+16+svgLineH*(i+1), xmlText(shorten(s, 40)))
		}
		bw.WriteString("</g>\n")
	}
	bw.WriteString("</svg>\n")
	return bw.Flush()
}

// xmlText escapes s for XML text and attributes.
func xmlText(s string) string {
	var b strings.Builder
	xml.EscapeText(&b, []byte(s))
	return b.String()
}
