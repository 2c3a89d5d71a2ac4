package main

import (
	"bufio"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"unicode/utf8"

	"github.com/provgraph/provgraph/internal/normalize"
	"github.com/spf13/cobra"
)

type normalizeOptions struct {
	policy string
	base   string
	format string
	redact bool
}

func newNormalizeCommand(stdin io.Reader) *cobra.Command {
	var o normalizeOptions
	cmd := &cobra.Command{
		Use:   "normalize [flags] [URL ...]",
		Short: "Print the comparison key of each URL, with every step logged",
		Long: `Normalize runs the policy's ordered sequence on each URL and prints the
comparison key, the fragment (kept apart as evidence), the removed query
parameters and every step as rule, before and after. The input itself is
never changed.

URLs come from the arguments or, when there are none, one per line from
standard input (a trailing "\n" or "\r\n" ends a line and is not part of the
URL), so millions can be piped through. Results are printed in input order.

A URL the policy rejects is printed with an error code and message saying
what is wrong and where; the command then exits with status 1 after printing
every result.

Formats:
  text  a block per URL for people (the default); a value that holds a
        control or bidirectional formatting character is shown as a quoted
        Go string ("a\x1b[2K")
  json  one JSON object per input line: raw, normalized, parsed, fragment,
        compare, host_rule, removed_params, steps [{rule, before, after}],
        error {code, rule, offset, message}, policy {name, version, digest},
        parser {name, version, go, x_net, unicode}

` + exitHelp(
			"  0  every URL was normalized",
			"  1  some URLs were rejected; every result was still printed",
			"  2  usage error: bad flag, argument, policy or base URL",
			"  3  I/O error reading the input or writing the output"),
		Example: `  provgraph normalize 'HTTP://Example.com:80/guide?utm_source=chat#pricing'
  provgraph normalize --format json < testdata/citations.txt
  provgraph normalize --base https://example.test/docs/ ../guide
  provgraph normalize --policy lenient '  https://example.test/a b  '`,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runNormalize(cmd, o, args, stdin)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.policy, "policy", "default", `policy: "default", "lenient" (in any letter case) or a TOML policy file of at most 1 MiB (see 'provgraph policy show')`)
	f.StringVar(&o.base, "base", "", "absolute base URL, with a scheme, to resolve relative references against (none: relative references are rejected)")
	f.StringVar(&o.format, "format", "text", "output format: text or json")
	f.BoolVar(&o.redact, "redact-userinfo", false, `print the userinfo (credentials) of every URL as "user:***" (with a password) or "***"`)
	return cmd
}

func runNormalize(cmd *cobra.Command, o normalizeOptions, args []string, stdin io.Reader) error {
	if o.format != "text" && o.format != "json" {
		return usagef("--format %q: want text or json", o.format)
	}
	pol, err := normalize.LoadPolicy(o.policy)
	if err != nil {
		return usageError{err}
	}
	n, err := normalize.New(pol, &normalize.Options{Base: o.base})
	if err != nil {
		var nerr *normalize.Error
		if errors.As(err, &nerr) {
			return usagef("--base %q: the base must be an absolute URL, with a scheme, such as https://example.test/docs/ (%s)", o.base, nerr.Msg)
		}
		return usagef("--base %q: %v", o.base, err)
	}
	out := bufio.NewWriterSize(cmd.OutOrStdout(), 64<<10)
	var w resultWriter
	if o.format == "json" {
		w = newJSONWriter(out, pol, o.redact)
	} else {
		w = newTextWriter(out, pol, o.base, o.redact)
	}
	rejected := false
	handle := func(raw string) error {
		res, err := n.Normalize(raw)
		var nerr *normalize.Error
		if err != nil && !errors.As(err, &nerr) {
			return err
		}
		if nerr != nil {
			rejected = true
		}
		return w.write(res, nerr)
	}
	if len(args) > 0 {
		for _, a := range args {
			if err := handle(a); err != nil {
				return err
			}
		}
	} else {
		r := bufio.NewReaderSize(stdin, 64<<10)
		line := 0
		for {
			s, err := r.ReadString('\n')
			if s != "" {
				line++
				s = strings.TrimSuffix(s, "\n")
				s = strings.TrimSuffix(s, "\r")
				if herr := handle(s); herr != nil {
					return herr
				}
			}
			if err == io.EOF {
				break
			}
			if err != nil {
				return fmt.Errorf("read standard input after line %d: %w", line, err)
			}
			if err := cmd.Context().Err(); err != nil {
				out.Flush()
				fmt.Fprintf(cmd.ErrOrStderr(), "normalize: interrupted; the results of the first %s are printed\n", plural(line, "line"))
				return interruptError{err: err, said: true}
			}
		}
	}
	if err := w.flush(); err != nil {
		return fmt.Errorf("write output: %w", err)
	}
	if err := out.Flush(); err != nil {
		return fmt.Errorf("write output: %w", err)
	}
	if rejected {
		return errRejected
	}
	return nil
}

type resultWriter interface {
	write(normalize.Result, *normalize.Error) error
	flush() error
}

// jsonResult is the JSON shape of one result. Field order is the output
// order; empty lists print as [] so consumers need no null checks.
type jsonResult struct {
	Raw           string            `json:"raw"`
	RawHex        string            `json:"raw_hex,omitempty"`
	Normalized    string            `json:"normalized,omitempty"`
	Parsed        string            `json:"parsed,omitempty"`
	Fragment      *string           `json:"fragment"`
	Compare       string            `json:"compare,omitempty"`
	HostRule      string            `json:"host_rule,omitempty"`
	RemovedParams []string          `json:"removed_params"`
	Steps         []normalize.Step  `json:"steps"`
	Error         *jsonError        `json:"error,omitempty"`
	Policy        jsonPolicy        `json:"policy"`
	Parser        *normalize.Parser `json:"parser"`
}

type jsonError struct {
	Code    normalize.Code `json:"code"`
	Rule    normalize.Rule `json:"rule,omitempty"`
	Offset  *int           `json:"offset,omitempty"`
	Message string         `json:"message"`
}

type jsonPolicy struct {
	Name    string `json:"name"`
	Version string `json:"version"`
	Digest  string `json:"digest"`
}

type jsonWriter struct {
	enc    *json.Encoder
	policy jsonPolicy
	parser normalize.Parser
	redact bool
}

func newJSONWriter(w io.Writer, p *normalize.Policy, redact bool) *jsonWriter {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return &jsonWriter{
		enc:    enc,
		policy: jsonPolicy{Name: p.Name(), Version: p.Version(), Digest: p.Digest()},
		parser: normalize.ParserInfo(),
		redact: redact,
	}
}

func (j *jsonWriter) write(res normalize.Result, nerr *normalize.Error) error {
	r := jsonResult{
		Raw:           res.Raw,
		Normalized:    res.Key,
		Parsed:        res.Parsed,
		RemovedParams: res.RemovedParams(),
		Steps:         res.Steps(),
		HostRule:      res.HostRule,
		Policy:        j.policy,
		Parser:        &j.parser,
	}
	if !utf8.ValidString(res.Raw) {
		r.RawHex = hex.EncodeToString([]byte(res.Raw))
	}
	if res.HasFragment {
		r.Fragment = &res.Fragment
	}
	if nerr == nil {
		r.Compare = string(res.Compare)
	} else {
		r.Error = &jsonError{Code: nerr.Code, Rule: nerr.Rule, Message: nerr.Msg}
		if nerr.Offset >= 0 {
			off := nerr.Offset
			r.Error.Offset = &off
		}
	}
	if r.RemovedParams == nil {
		r.RemovedParams = []string{}
	}
	if r.Steps == nil {
		r.Steps = []normalize.Step{}
	}
	if j.redact {
		r = redacted(r)
		if r.RawHex != "" {
			r.RawHex = hex.EncodeToString([]byte(r.Raw))
		}
	}
	return j.enc.Encode(&r)
}

func (j *jsonWriter) flush() error { return nil }

type textWriter struct {
	w      io.Writer
	first  bool
	redact bool
}

func newTextWriter(w io.Writer, p *normalize.Policy, base string, redact bool) *textWriter {
	pi := normalize.ParserInfo()
	fmt.Fprintf(w, "# policy %s %s %s\n# parser %s %s (%s, golang.org/x/net %s, Unicode %s)\n",
		escapeText(p.Name()), escapeText(p.Version()), p.Digest(), pi.Name, pi.Version, pi.Go, pi.XNet, pi.Unicode)
	if base != "" {
		fmt.Fprintf(w, "# base %s\n", quoteIfNeeded(redactIf(redact, base)))
	}
	return &textWriter{w: w, first: true, redact: redact}
}

// textResult holds the values of a result that the text output shows, so
// that they can be redacted together.
type textResult struct {
	Raw, Key, Parsed, Fragment, Msg string
	Removed                         []string
	Steps                           []normalize.Step
}

func (t *textWriter) write(res normalize.Result, nerr *normalize.Error) error {
	v := textResult{Raw: res.Raw, Key: res.Key, Parsed: res.Parsed, Fragment: res.Fragment, Removed: res.RemovedParams(), Steps: res.Steps()}
	if nerr != nil {
		v.Msg = nerr.Msg
	}
	v = redactIf(t.redact, v)
	tw := tabwriter.NewWriter(t.w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "\nraw:\t%s\n", quoteIfNeeded(v.Raw))
	if nerr != nil {
		where := ""
		if nerr.Offset >= 0 {
			where = fmt.Sprintf(" at byte %d", nerr.Offset)
		}
		fmt.Fprintf(tw, "error:\t%s%s: %s\n", nerr.Code, where, escapeLine(v.Msg))
	} else {
		fmt.Fprintf(tw, "key:\t%s\n", quoteIfNeeded(v.Key))
		if res.Parsed != res.Key {
			fmt.Fprintf(tw, "parsed:\t%s\n", quoteIfNeeded(v.Parsed))
		}
		if res.HasFragment {
			fmt.Fprintf(tw, "fragment:\t%s\n", quoteIfNeeded(v.Fragment))
		}
		fmt.Fprintf(tw, "compare:\t%s\n", res.Compare)
		if res.HostRule != "" {
			fmt.Fprintf(tw, "host rule:\t%s\n", escapeText(res.HostRule))
		}
		if len(v.Removed) > 0 {
			fmt.Fprintf(tw, "removed:\t%s\n", strings.Join(escapeAll(v.Removed), " "))
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(v.Steps) > 0 {
		tw = tabwriter.NewWriter(t.w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "steps:")
		for _, s := range v.Steps {
			fmt.Fprintf(tw, "  %s\t%s\t-> %s\n", s.Rule, showValue(s.Before), showValue(s.After))
		}
		return tw.Flush()
	}
	return nil
}

func (t *textWriter) flush() error { return nil }

// quoteIfNeeded quotes a value that would be misread in text output as a
// Go string literal, as escapeText does: a URL or key that is empty or
// holds whitespace, besides one escapeText escapes.
func quoteIfNeeded(s string) string {
	if s == "" || needsEscape(s) || strings.ContainsFunc(s, func(r rune) bool { return r <= ' ' }) {
		return strconv.Quote(s)
	}
	return s
}

func showValue(s string) string {
	if s == "" {
		return "(empty)"
	}
	return quoteIfNeeded(s)
}
