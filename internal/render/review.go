package render

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"encoding/csv"
	"fmt"
	"io"
	"strings"

	"github.com/provgraph/provgraph/internal/query"
	"github.com/provgraph/provgraph/internal/review"
)

// ReviewedPage is one page of groups with their review state, as groups
// with a filter or a database with decisions lists them.
type ReviewedPage struct {
	Policy query.PolicyRef
	Groups []*query.Group
	Status func(*query.Group) *review.Status
	Total  int    // groups the filter selects
	Next   string // cursor of the next page, "" on the last
}

// reviewedGroup is a group in JSON with its review state.
type reviewedGroup struct {
	*query.Group
	Review *review.Status `json:"review"`
}

// ReviewedWriter lists groups with their review state, in order: encode
// appends one group's bytes (it may run on several goroutines at once),
// write gets them in order. It returns what it listed.
type ReviewedWriter func(encode func(buf []byte, g *query.Group, s *review.Status) []byte, write func([]byte) error) (Listed, error)

// Listed is what a ReviewedWriter listed: Shown groups of the Total the
// filter selects, the cursor of the Next page ("" on the last), and, when
// the whole database was grouped for it, the Rest of its report (the
// rejected and unnormalized citations, the counts, the incomplete runs),
// which JSON then carries as the listing without review state does.
type Listed struct {
	Shown, Total int
	Next         string
	Rest         *query.Report
}

// ReviewedGroups writes a page of groups in format (table, json or csv),
// as ReviewedStream does.
func ReviewedGroups(w io.Writer, format string, p ReviewedPage) error {
	return ReviewedStream(context.Background(), w, format, p.Policy, func(encode func([]byte, *query.Group, *review.Status) []byte, write func([]byte) error) (Listed, error) {
		var b []byte
		for _, g := range p.Groups {
			b = encode(b[:0], g, p.Status(g))
			if err := write(b); err != nil {
				return Listed{}, err
			}
		}
		return Listed{Shown: len(p.Groups), Total: p.Total, Next: p.Next}, nil
	})
}

// ReviewedStream writes the groups groups lists in format (table, json or
// csv), each as Groups writes it, then its review state (the latest
// decision, stale and what changed), as they come: nothing but the
// group being encoded is held. JSON is {"policy", "groups", "total",
// "next"}, each group with a "review" object; CSV adds the columns
// review_state, decision, reviewer and review_id; a table ends with a
// line "# N of TOTAL groups" and the cursor of the next page. With the
// Rest of the report, JSON also has "rejected", "unnormalized", "counts"
// and "incomplete_runs" after "next", as Groups writes them: a consumer
// of the listing without review state reads them the same once a
// decision is stored.
func ReviewedStream(ctx context.Context, w io.Writer, format string, pol query.PolicyRef, groups ReviewedWriter) error {
	bw := bufio.NewWriterSize(w, 1<<20)
	write := func(p []byte) error {
		_, err := bw.Write(p)
		return err
	}
	switch format {
	case "json":
		// As Groups: each group is ",\n    {...}", the first comma dropped.
		bw.WriteString("{\n  \"policy\": ")
		bw.Write(jsonValue(pol, "  "))
		bw.WriteString(",\n  \"groups\": [")
		first := true
		l, err := groups(func(buf []byte, g *query.Group, s *review.Status) []byte {
			return appendReviewedJSON(append(buf, ",\n    "...), g, s, "    ")
		}, func(p []byte) error {
			if first {
				p, first = p[1:], false
			}
			return write(p)
		})
		if err != nil {
			return err
		}
		if !first {
			bw.WriteString("\n  ")
		}
		fmt.Fprintf(bw, "],\n  \"total\": %d,\n  \"next\": ", l.Total)
		bw.Write(appendJSONString(nil, l.Next))
		if rest := l.Rest; rest != nil {
			if err := writeRestJSON(ctx, bw, rest); err != nil {
				return err
			}
		}
		bw.WriteString("\n}\n")
	case "csv":
		bw.WriteString("group_id,verdict,group_key,citation_id,raw_url,fragment,resolved_url,key,reasons,review_state,decision,reviewer,review_id\n")
		if _, err := groups(reviewedCSV, write); err != nil {
			return err
		}
	default:
		bw.WriteString(policyHeader(pol))
		l, err := groups(func(b []byte, g *query.Group, s *review.Status) []byte {
			return appendStatus(groupTable(b, g), s)
		}, write)
		if err != nil {
			return err
		}
		fmt.Fprintf(bw, "\n# %d of %d groups", l.Shown, l.Total)
		if l.Next != "" {
			fmt.Fprintf(bw, "; next page: --cursor %s", l.Next)
		}
		bw.WriteString("\n")
	}
	return bw.Flush()
}

// appendReviewedJSON appends g with its review state as encoding/json
// writes reviewedGroup{g, s} with SetIndent(prefix, "  "): the group's
// members, then "review".
func appendReviewedJSON(b []byte, g *query.Group, s *review.Status, prefix string) []byte {
	b = appendGroupJSON(b, g, prefix)
	b = b[:len(b)-1] // the group's closing brace, after its indentation
	b = bytes.TrimRight(b, " \n")
	b = append(b, ",\n"...)
	b = append(b, prefix...)
	b = append(b, "  \"review\": "...)
	b = append(b, jsonValue(s, prefix+"  ")...)
	b = append(b, '\n')
	b = append(b, prefix...)
	return append(b, '}')
}

// reviewedCSV appends one CSV row per member of g, with its review state.
func reviewedCSV(b []byte, g *query.Group, s *review.Status) []byte {
	dec, who, id := "", "", ""
	if s.Latest != nil {
		dec, who, id = s.Latest.Decision, s.Latest.Reviewer, s.Latest.ID
	}
	var buf bytes.Buffer
	cw := csv.NewWriter(&buf)
	for _, m := range g.Members {
		frag := ""
		if m.Fragment != nil {
			frag = *m.Fragment
		}
		cw.Write(EscapeAll([]string{g.ID, g.Verdict, g.Key, m.CitationID, m.RawURL, frag, m.ResolvedURL, m.Key, strings.Join(m.Reasons, "; "), s.State, dec, who, id}))
	}
	cw.Flush()
	return append(b, buf.Bytes()...)
}

// appendStatus appends a group's review lines to its table entry.
func appendStatus(b []byte, s *review.Status) []byte {
	if s.Latest == nil {
		return append(b, "  review: unreviewed\n"...)
	}
	b = append(b, "  review: "...)
	b = append(b, s.State...)
	b = append(b, ": "...)
	b = appendDecision(b, s.Latest)
	for _, c := range s.Changes {
		b = append(append(append(b, "      changed: "...), EscapeLine(c)...), '\n')
	}
	return b
}

// appendDecision appends one decision's line and its rationale. A
// decision about a pair or a relation starts with its subject.
func appendDecision(b []byte, d *review.Decision) []byte {
	switch d.Subject {
	case review.SubjectPair:
		b = fmt.Appendf(b, "pair %s: ", strings.Join(EscapeAll(d.Citations), " "))
	case review.SubjectRelation:
		b = fmt.Appendf(b, "relation %s -> %s: ", EscapeText(d.GroupID), EscapeText(d.RelatedTo))
	}
	b = append(b, EscapeText(d.Decision)...)
	if d.Relation != "" {
		b = append(append(b, ' '), EscapeText(d.Relation)...)
	}
	if d.RelatedTo != "" && d.Subject != review.SubjectRelation {
		b = append(append(b, " -> "...), EscapeText(d.RelatedTo)...)
	}
	b = fmt.Appendf(b, " by %s at %s (%s", EscapeText(d.Reviewer), EscapeText(d.At), EscapeText(d.ID))
	if d.Revises != "" {
		b = fmt.Appendf(b, ", revises %s", EscapeText(d.Revises))
	}
	b = append(b, ")\n"...)
	if d.Rationale != "" {
		b = append(append(append(b, "      rationale: "...), EscapeLine(d.Rationale)...), '\n')
	}
	return b
}

// Decisions writes decisions (review list) as a table or JSON.
func Decisions(w io.Writer, format string, ds []*review.Decision) error {
	if format == "json" {
		if ds == nil {
			ds = []*review.Decision{}
		}
		return JSON(w, ds)
	}
	bw := bufio.NewWriter(w)
	for _, d := range ds {
		var b []byte
		b = fmt.Appendf(b, "%s  %s  ", EscapeText(cmp.Or(d.GroupID, "-")), strings.Join(EscapeAll(d.Citations), ","))
		bw.Write(appendDecision(b, d))
	}
	return bw.Flush()
}

// ReviewShow writes one group with its review state and the history of
// its decisions (review show), then the decisions about pairs of its
// members and about its relations (subjects), each with its state and
// history; JSON puts these under "subjects".
func ReviewShow(w io.Writer, format string, pol query.PolicyRef, g *query.Group, s *review.Status, subjects []*review.SubjectStatus) error {
	if subjects == nil {
		subjects = []*review.SubjectStatus{}
	}
	if format == "json" {
		return JSON(w, struct {
			Policy query.PolicyRef `json:"policy"`
			reviewedGroup
			Subjects []*review.SubjectStatus `json:"subjects"`
		}{pol, reviewedGroup{g, s}, subjects})
	}
	var b bytes.Buffer
	b.WriteString(policyHeader(pol))
	b.Write(appendStatus(groupTable(nil, g), s))
	if len(s.History) > 0 {
		b.WriteString("  history (newest first):\n")
		for _, d := range s.History {
			b.Write(appendDecision([]byte("    "), d))
		}
	}
	b.Write(appendSubjects(nil, subjects))
	_, err := w.Write(b.Bytes())
	return err
}

// appendSubjects appends the pairs and relations decided about, each
// with its state, what changed, and its history.
func appendSubjects(b []byte, subjects []*review.SubjectStatus) []byte {
	if len(subjects) == 0 {
		return b
	}
	b = append(b, "  pairs and relations decided about (newest first; not the group's own decisions):\n"...)
	for _, s := range subjects {
		b = append(append(b, "    "...), s.State...)
		b = append(b, ": "...)
		b = appendDecision(b, s.Latest)
		for _, c := range s.Changes {
			b = append(append(append(b, "        changed: "...), EscapeLine(c)...), '\n')
		}
		for _, d := range s.History[1:] {
			b = appendDecision(append(b, "      earlier: "...), d)
		}
	}
	return b
}

// ReviewCounts writes the review counts that stats adds when the database
// holds decisions.
func ReviewCounts(w io.Writer, c *review.Counts) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "\nreview (decisions: %d, --explain review-state:S lists the groups):\n", c.Decisions)
	row := func(name string, n int) { fmt.Fprintf(bw, "  %-32s %8d\n", name, n) }
	row("unreviewed groups", c.Unreviewed)
	row("decided groups", c.Decided)
	row("stale groups", c.Stale)
	for _, d := range review.Decisions {
		row("  latest decision "+d, c.ByDecision[d])
	}
	row("splits (different)", c.Splits)
	row("confirmed duplicate citations", c.ConfirmedMembers)
	row("unreviewed duplicate citations", c.UnreviewedMembers)
	return bw.Flush()
}

// LineageDecisions writes, after a lineage's text, the decisions about
// each of its citations (of), newest first; nothing when there are none.
func LineageDecisions(w io.Writer, ls []*query.Lineage, of func(citationID string) []*review.Decision) error {
	var b []byte
	for _, l := range ls {
		ds := of(l.CitationID)
		if len(ds) == 0 {
			continue
		}
		b = fmt.Appendf(b, "\ndecisions about %s (newest first):\n", EscapeText(l.CitationID))
		for _, d := range ds {
			b = appendDecision(append(b, "  "...), d)
		}
	}
	_, err := w.Write(b)
	return err
}

// LineageWithDecisions is a lineage in JSON with the decisions about its
// citation, as lineage --format json writes it when there are decisions.
type LineageWithDecisions struct {
	*query.Lineage
	Decisions []*review.Decision `json:"decisions"`
}
