package render

import (
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"unicode/utf8"

	"github.com/provgraph/provgraph/internal/normalize"
)

type NormalizeWriter interface {
	Write(normalize.Result, *normalize.Error) error
	Flush() error
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

type normalizeJSON struct {
	enc    *json.Encoder
	policy jsonPolicy
	parser normalize.Parser
	redact bool
}

func NewNormalizeJSON(w io.Writer, p *normalize.Policy, redact bool) *normalizeJSON {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return &normalizeJSON{
		enc:    enc,
		policy: jsonPolicy{Name: p.Name(), Version: p.Version(), Digest: p.Digest()},
		parser: normalize.ParserInfo(),
		redact: redact,
	}
}

func (j *normalizeJSON) Write(res normalize.Result, nerr *normalize.Error) error {
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
		r = Redacted(r)
		if r.RawHex != "" {
			r.RawHex = hex.EncodeToString([]byte(r.Raw))
		}
	}
	return j.enc.Encode(&r)
}

func (j *normalizeJSON) Flush() error { return nil }

type normalizeText struct {
	w      io.Writer
	first  bool
	redact bool
}

func NewNormalizeText(w io.Writer, p *normalize.Policy, base string, redact bool) *normalizeText {
	pi := normalize.ParserInfo()
	fmt.Fprintf(w, "# policy %s %s %s\n# parser %s %s (%s, golang.org/x/net %s, Unicode %s)\n",
		EscapeText(p.Name()), EscapeText(p.Version()), p.Digest(), pi.Name, pi.Version, pi.Go, pi.XNet, pi.Unicode)
	if base != "" {
		fmt.Fprintf(w, "# base %s\n", QuoteIfNeeded(RedactIf(redact, base)))
	}
	return &normalizeText{w: w, first: true, redact: redact}
}

// textResult holds the values of a result that the text output shows, so
// that they can be redacted together.
type textResult struct {
	Raw, Key, Parsed, Fragment, Msg string
	Removed                         []string
	Steps                           []normalize.Step
}

func (t *normalizeText) Write(res normalize.Result, nerr *normalize.Error) error {
	v := textResult{Raw: res.Raw, Key: res.Key, Parsed: res.Parsed, Fragment: res.Fragment, Removed: res.RemovedParams(), Steps: res.Steps()}
	if nerr != nil {
		v.Msg = nerr.Msg
	}
	v = RedactIf(t.redact, v)
	tw := tabwriter.NewWriter(t.w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "\nraw:\t%s\n", QuoteIfNeeded(v.Raw))
	if nerr != nil {
		where := ""
		if nerr.Offset >= 0 {
			where = fmt.Sprintf(" at byte %d", nerr.Offset)
		}
		fmt.Fprintf(tw, "error:\t%s%s: %s\n", nerr.Code, where, EscapeLine(v.Msg))
	} else {
		fmt.Fprintf(tw, "key:\t%s\n", QuoteIfNeeded(v.Key))
		if res.Parsed != res.Key {
			fmt.Fprintf(tw, "parsed:\t%s\n", QuoteIfNeeded(v.Parsed))
		}
		if res.HasFragment {
			fmt.Fprintf(tw, "fragment:\t%s\n", QuoteIfNeeded(v.Fragment))
		}
		fmt.Fprintf(tw, "compare:\t%s\n", res.Compare)
		if res.HostRule != "" {
			fmt.Fprintf(tw, "host rule:\t%s\n", EscapeText(res.HostRule))
		}
		if len(v.Removed) > 0 {
			fmt.Fprintf(tw, "removed:\t%s\n", strings.Join(EscapeAll(v.Removed), " "))
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(v.Steps) > 0 {
		tw = tabwriter.NewWriter(t.w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "steps:")
		for _, s := range v.Steps {
			fmt.Fprintf(tw, "  %s\t%s\t-> %s\n", s.Rule, ShowValue(s.Before), ShowValue(s.After))
		}
		return tw.Flush()
	}
	return nil
}

func (t *normalizeText) Flush() error { return nil }

// QuoteIfNeeded quotes a value that would be misread in text output as a
// Go string literal, as EscapeText does: a URL or key that is empty or
// holds whitespace, besides one EscapeText escapes.
func QuoteIfNeeded(s string) string {
	if s == "" || needsEscape(s) || strings.ContainsFunc(s, func(r rune) bool { return r <= ' ' }) {
		return strconv.Quote(s)
	}
	return s
}

func ShowValue(s string) string {
	if s == "" {
		return "(empty)"
	}
	return QuoteIfNeeded(s)
}
