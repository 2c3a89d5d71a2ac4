package render

import (
	"bufio"
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/provgraph/provgraph/internal/query"
)

// RedactGroups writes the groups of gw and the rest of its report with
// their URLs' userinfo redacted (--redact-userinfo).
func RedactGroups(gw GroupWriter) GroupWriter {
	return func(encode func([]byte, *query.Group) []byte, write func([]byte) error) (*query.Report, error) {
		rest, err := gw(func(b []byte, g *query.Group) []byte { return encode(b, Redacted(g)) }, write)
		if err != nil {
			return nil, err
		}
		// The rejected citations a report reads again when written (one
		// from a grouping view) are redacted as they are read.
		return Redacted(rest).WithRejectedMap(Redacted[query.RejectedURL]), nil
	}
}

func JSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// GroupWriter writes the listed groups through encode and write (as
// query.GroupSet.Write does) and returns the rest of the report.
type GroupWriter func(encode func([]byte, *query.Group) []byte, write func([]byte) error) (*query.Report, error)

// ReportGroups writes the groups of a whole report, for Groups.
func ReportGroups(rep *query.Report) GroupWriter {
	return func(encode func([]byte, *query.Group) []byte, write func([]byte) error) (*query.Report, error) {
		var buf []byte
		for _, g := range rep.Groups {
			buf = encode(buf[:0], g)
			if err := write(buf); err != nil {
				return nil, err
			}
		}
		rest := *rep
		rest.Groups = nil
		return &rest, nil
	}
}

// Groups writes a groups report in format (table, json or csv): the
// head, the groups as groups writes them, then what follows them (rejected
// citations and counts), so that the groups of a million citations are
// never all in memory at once.
//
// The rejected and unnormalized citations are written as the report
// lists them (query.Report.EachRejected, EachMissing): a report written
// from a grouping view reads them again then, under ctx.
func Groups(ctx context.Context, w io.Writer, format string, pol query.PolicyRef, warnings []string, groups GroupWriter) error {
	bw := bufio.NewWriterSize(w, 1<<20)
	write := func(p []byte) error {
		_, err := bw.Write(p)
		return err
	}
	var rest *query.Report
	var err error
	switch format {
	case "json":
		// The groups are written as ",\n    {...}"; the first comma is
		// dropped. This is byte for byte what encoding/json writes for the
		// whole report with a two-space indent.
		bw.WriteString("{\n  \"policy\": ")
		bw.Write(jsonValue(pol, "  "))
		bw.WriteString(",\n  \"groups\": [")
		first := true
		rest, err = groups(func(buf []byte, g *query.Group) []byte {
			return appendGroupJSON(append(buf, ",\n    "...), g, "    ")
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
		bw.WriteString("]")
		if err := writeRestJSON(ctx, bw, rest); err != nil {
			return err
		}
		if len(warnings) > 0 {
			bw.WriteString(",\n  \"warnings\": ")
			bw.Write(jsonValue(warnings, "  "))
		}
		bw.WriteString("\n}\n")
	case "csv":
		bw.WriteString("group_id,verdict,group_key,citation_id,raw_url,fragment,resolved_url,key,reasons\n")
		if _, err = groups(groupCSV, write); err != nil {
			return err
		}
	default:
		bw.WriteString(policyHeader(pol))
		if rest, err = groups(groupTable, write); err != nil {
			return err
		}
		first := true
		if err := rest.EachRejected(ctx, func(r query.RejectedURL) error {
			if first {
				fmt.Fprintf(bw, "\nrejected by the policy (never grouped):\n")
				first = false
			}
			_, err := fmt.Fprintf(bw, "  %s  %s  %s\n", EscapeText(r.CitationID), QuoteIfNeeded(r.RawURL), EscapeText(r.Code))
			return err
		}); err != nil {
			return err
		}
		keys := make([]string, 0, len(rest.Counts))
		for k := range rest.Counts {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		fmt.Fprintln(bw)
		for _, k := range keys {
			fmt.Fprintf(bw, "# %s: %d\n", EscapeText(k), rest.Counts[k])
		}
	}
	return bw.Flush()
}

// writeRestJSON writes the members of a groups report that follow its
// groups: ",\n  \"rejected\": [...]", then "unnormalized", "counts" and
// "incomplete_runs", the lists read from rest as they are written.
func writeRestJSON(ctx context.Context, bw *bufio.Writer, rest *query.Report) error {
	bw.WriteString(",\n  \"rejected\": ")
	if err := jsonList(bw, func(each func(any) error) error {
		return rest.EachRejected(ctx, func(r query.RejectedURL) error { return each(r) })
	}); err != nil {
		return err
	}
	bw.WriteString(",\n  \"unnormalized\": ")
	if err := jsonList(bw, func(each func(any) error) error {
		return rest.EachMissing(ctx, func(id string) error { return each(id) })
	}); err != nil {
		return err
	}
	bw.WriteString(",\n  \"counts\": ")
	bw.Write(jsonValue(rest.Counts, "  "))
	bw.WriteString(",\n  \"incomplete_runs\": ")
	bw.Write(jsonValue(rest.IncompleteRuns, "  "))
	return nil
}

// policyHeader is the first line of a table: the policy, or that an
// empty database holds none.
func policyHeader(p query.PolicyRef) string {
	if p.Digest == "" {
		return "# policy: none (the database holds no normalization policy)\n"
	}
	return fmt.Sprintf("# policy %s %s\n", EscapeText(p.String()), EscapeText(p.Digest))
}

// jsonList writes the values list gives as a JSON array, byte for byte as
// jsonValue writes a slice of them under a two-space prefix, one value at
// a time: a list read from a grouping view is not held.
func jsonList(bw *bufio.Writer, list func(each func(any) error) error) error {
	n := 0
	err := list(func(v any) error {
		if n == 0 {
			bw.WriteString("[")
		} else {
			bw.WriteString(",")
		}
		n++
		bw.WriteString("\n    ")
		_, err := bw.Write(jsonValue(v, "    "))
		return err
	})
	if err != nil {
		return err
	}
	if n == 0 {
		bw.WriteString("[]")
	} else {
		bw.WriteString("\n  ]")
	}
	return nil
}

// jsonValue encodes v as encoding/json does with a two-space indent under
// prefix, without the final newline.
func jsonValue(v any, prefix string) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent(prefix, "  ")
	if err := enc.Encode(v); err != nil {
		panic(err) // plain data
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}

// groupTable appends one group in the table format. Every value is
// escaped (EscapeText, QuoteIfNeeded; EscapeLine for the reasons and
// evidence, which are sentences).
func groupTable(b []byte, g *query.Group) []byte {
	b = append(append(append(append(b, '\n'), EscapeText(g.ID)...), "  "...), EscapeText(g.Verdict)...)
	b = append(strconv.AppendInt(append(b, "  "...), int64(len(g.Members)), 10), " member"...)
	if len(g.Members) != 1 {
		b = append(b, 's')
	}
	b = append(append(append(b, "  "...), QuoteIfNeeded(g.Key)...), '\n')
	for _, m := range g.Members {
		b = append(append(append(append(b, "  "...), EscapeText(m.CitationID)...), "  "...), QuoteIfNeeded(m.RawURL)...)
		if m.Fragment != nil {
			b = append(strconv.AppendQuote(append(b, "  (fragment "...), *m.Fragment), " kept as evidence)"...)
		}
		if m.ResolvedURL != "" {
			b = append(append(b, "  resolved "...), QuoteIfNeeded(m.ResolvedURL)...)
		}
		b = append(b, '\n')
		for _, r := range m.Reasons {
			b = append(append(append(b, "      "...), EscapeLine(r)...), '\n')
		}
		if m.Passage != nil {
			b = append(append(append(b, "      cited passage: "...), PassageText(m.Passage)...), '\n')
		}
	}
	for _, r := range g.Relations {
		to := EscapeText(r.To)
		if r.To == "" {
			to = QuoteIfNeeded(r.ToURL) + " (not cited)"
		}
		b = append(append(append(append(b, "  "...), EscapeText(r.Type)...), " -> "...), to...)
		if r.Review {
			b = append(b, " [review]"...)
		}
		b = append(append(append(b, "\n      "...), EscapeLine(r.Evidence)...), '\n')
	}
	return b
}

// groupCSV appends one row per member of a group. A field that holds a
// control or bidirectional formatting character is written as EscapeText
// writes it (a double-quoted Go string), so that a CSV file shown in a
// terminal cannot rewrite it; --format json has the exact values.
func groupCSV(b []byte, g *query.Group) []byte {
	var buf bytes.Buffer
	cw := csv.NewWriter(&buf)
	for _, m := range g.Members {
		frag := ""
		if m.Fragment != nil {
			frag = *m.Fragment
		}
		cw.Write(EscapeAll([]string{g.ID, g.Verdict, g.Key, m.CitationID, m.RawURL, frag, m.ResolvedURL, m.Key, strings.Join(m.Reasons, "; ")}))
	}
	cw.Flush()
	return append(b, buf.Bytes()...)
}

// ReportJSON writes a whole report as JSON would, a group at a
// time.
func ReportJSON(w io.Writer, rep *query.Report) error {
	return Groups(context.Background(), w, "json", rep.Policy, rep.Warnings, ReportGroups(rep))
}

// PassageText says briefly whether a cited passage was found in the page's
// main text: "found (exact, score 1.00)" or "not found (best window, score
// 0.31)".
func PassageText(p *query.Passage) string {
	found := "found"
	if !p.Found {
		found = "not found"
	}
	method := p.Method
	if method == "window" {
		method = "best window"
	}
	if method == "" {
		return fmt.Sprintf("%s (score %.2f)", found, p.Score)
	}
	return fmt.Sprintf("%s (%s, score %.2f)", found, EscapeText(method), p.Score)
}
