package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/provgraph/provgraph/internal/normalize"
	"github.com/provgraph/provgraph/internal/render"
	"github.com/provgraph/provgraph/internal/service"
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
	pol, err := service.LoadPolicy(o.policy)
	if err != nil {
		return err
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
	var w render.NormalizeWriter
	if o.format == "json" {
		w = render.NewNormalizeJSON(out, pol, o.redact)
	} else {
		w = render.NewNormalizeText(out, pol, o.base, o.redact)
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
		return w.Write(res, nerr)
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
				fmt.Fprintf(cmd.ErrOrStderr(), "normalize: interrupted; the results of the first %s are printed\n", render.Plural(line, "line"))
				return service.InterruptError{Err: err, Said: true}
			}
		}
	}
	if err := w.Flush(); err != nil {
		return fmt.Errorf("write output: %w", err)
	}
	if err := out.Flush(); err != nil {
		return fmt.Errorf("write output: %w", err)
	}
	if rejected {
		return service.ErrRejected
	}
	return nil
}
