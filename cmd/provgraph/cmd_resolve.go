package main

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/provgraph/provgraph/internal/capture"
	"github.com/provgraph/provgraph/internal/extract"
	"github.com/provgraph/provgraph/internal/ingest"
	"github.com/provgraph/provgraph/internal/model"
	"github.com/provgraph/provgraph/internal/render"
	"github.com/provgraph/provgraph/internal/resolve"
	"github.com/provgraph/provgraph/internal/service"
)

type resolveOptions struct {
	dbOptions
	maxRedirects   int
	timeout        time.Duration
	concurrency    int
	perHost        int
	userAgent      string
	allowPrivate   bool
	onlyUnresolved bool
	since          string
	warc           string
	noWARC         bool
	workMem        string
}

// resolveBytesPerCitation is what resolve holds per selected citation:
// its facts and its share of the targets (at a million citations, all of
// them selected, the selection that read every citation's facts at once
// peaked at 3.89 GB: go run ./bench/resolvesel DB).
const resolveBytesPerCitation = 4000

// warcDir is where the WARC captures of database db go by default: a
// directory beside it, named after it.
func warcDir(db string) string { return db + ".warc" }

// userAgent is the default User-Agent of resolve: the tool, its version and
// where to read about it.
func userAgent() string {
	v, _, _ := strings.Cut(version(), " ")
	return "provgraph/" + v + " (+https://w3id.org/provgraph)"
}

func newResolveCommand() *cobra.Command {
	var o resolveOptions
	cmd := &cobra.Command{
		Use:   "resolve [flags]",
		Short: "Retrieve the cited URLs and record the redirects, canonical signals and content hash observed",
		Long: fmt.Sprintf(`Resolve fetches the URL of every citation whose raw URL a stored
normalization accepted (the URL Standard's href, resolved against its base
URL, without the fragment) and records what it observed as a new retrieval
activity of the citation: every redirect hop (from, to, status, time,
whether it crossed hosts), the final URL, status and content type, the
SHA-256 of the body, and the canonical URLs declared in the Link header
and in the HTML head (at most %d distinct URLs from each; the number
dropped is recorded). Earlier retrievals are kept, never overwritten.
A retrieval that fails is recorded too, with its outcome: ok, http-error,
redirect-loop, too-many-redirects, invalid-redirect, timeout, dns-error,
tls-error, connect-refused, connect-error, read-error, blocked-address,
blocked-port, unsupported-scheme, invalid-url, body-too-large or
capture-error.

Policy (recorded on the run's node):
  redirects   at most --max-redirects (default %d); 301, 302, 303, 307 and
              308 with a Location are followed with GET, by hand. With 0,
              the first response is recorded and a redirect is a hop with
              the outcome too-many-redirects
  timeout     --timeout for each request, dialling to the end of the body
  body        at most %d bytes are read; a longer body gets no hash
  schemes     %s
  ports       %s
  addresses   public only: loopback, private, link-local, multicast,
              unspecified and other special-purpose addresses are refused,
              checked on the address dialled (after DNS, after every
              redirect); proxy settings of the environment are ignored.
              --allow-private lifts the address and port checks, for tests
              on this machine; the summary says when the guard blocked
              retrievals.

--only-unresolved skips the citations that have a retrieval that did not
fail (outcome ok, or a retrieval given in the input without an outcome):
a citation whose every retrieval failed, blocked by the guard or
otherwise, is retrieved again, and its failed retrievals are kept.

Captures: every exchange of every retrieval (each redirect hop's request and
response, with up to 4 KiB of its body, and the final request and response,
with its body up to the body limit, marked WARC-Truncated past it) is
written as WARC 1.1 records (gzip per record, SHA-256 block and payload
digests, request and response paired by WARC-Concurrent-To, files rotated
at 1 GiB, a warcinfo record naming provgraph's version and the run) into
--warc DIR, by default the database's name with ".warc" added
(provgraph.db.warc/). The retrieval's snapshot_ref is where its final
response record is: warc:FILE#OFFSET;<urn:uuid:...>. The records are made
durable before the retrievals that name them are saved. A capture that
cannot be written (a full disk, a read-only directory) gives that
retrieval the outcome capture-error; the others go on. --no-warc writes no
capture (and records no snapshot_ref).

Extraction: the final body of every retrieval (captured or not) is read by
the extractor (%s): title, og:title, language, declared dates and whether
they disagree, a digest and a 64-bit SimHash of the main text, its word
count, a soft-error class (http-4xx, soft-404, login-wall, ...) and any
problem, recorded as a pg:Extraction that used the response and generated
a pg:ExtractedEvidence. The main text itself is not stored: the capture
holds it. For a citation with cited_text, a passage check (found, score,
method, matched span) is recorded against the extraction. A page the
extractor cannot read whole (gigantic, nested too deep, not in its
charset) is recorded with its problem. "provgraph extract" derives the
evidence again from the captures without fetching.

Memory: the selection of the targets decides every citation with a bit
per term (passes over the index, some 12 MB a set at ten million
citations), then reads the facts of the selected citations only, about 4
KB each with their targets. When more citations are selected than the
working memory holds, --work-mem (default $PROVGRAPH_WORK_MEM, else three
quarters of the machine's or cgroup's memory), it exits 2 before reading
them, saying how many were selected: select fewer (--since,
--only-unresolved) or give more. Nothing is fetched or written then.

Ctrl-C stops the run: retrievals under way are abandoned, finished ones are
saved, and the run is marked interrupted (exit status 3).

`+exitHelp(
			"  0  success: every retrieval was made and recorded, failed ones with\n     their outcome",
			"  2  usage error: bad flag, or more citations selected than --work-mem holds",
			"  3  I/O or internal error, including a missing database file and a run\n     interrupted by Ctrl-C",
			exitLineLocked,
			exitLineCorrupt),
			resolve.MaxCanonicals, resolve.DefaultMaxRedirects, resolve.DefaultMaxBodyBytes,
			strings.Join(resolve.DefaultSchemes, ", "), strings.Trim(fmt.Sprint(resolve.DefaultPorts), "[]"), extract.Version),
		Example: `  provgraph resolve --db example.db
  provgraph resolve --db example.db --only-unresolved --since 2026-11-01T00:00:00Z`,
		Args: exactArgs(0),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runResolve(cmd, o)
		},
	}
	o.dbOptions.addFlags(cmd)
	f := cmd.Flags()
	f.IntVar(&o.maxRedirects, "max-redirects", resolve.DefaultMaxRedirects, "redirects followed at most; 0 records the first response and follows none (policy)")
	f.DurationVar(&o.timeout, "timeout", resolve.DefaultTimeout, "time allowed for each request, dialling to the end of the body (policy)")
	f.IntVar(&o.concurrency, "concurrency", ingest.DefaultConcurrency, "retrievals at once")
	f.IntVar(&o.perHost, "per-host", resolve.DefaultPerHost, "requests to one host at once")
	f.StringVar(&o.userAgent, "user-agent", userAgent(), "User-Agent header sent with every request (policy)")
	f.BoolVar(&o.allowPrivate, "allow-private", false, "allow loopback, private and other non-public addresses and any port (for tests; policy)")
	f.BoolVar(&o.onlyUnresolved, "only-unresolved", false, "skip citations that already have a retrieval that did not fail (failed ones are retried)")
	f.StringVar(&o.since, "since", "", "only citations observed at or after this RFC 3339 time")
	f.StringVar(&o.warc, "warc", "", "directory the WARC captures are written to (default: the database file's name with .warc added)")
	f.BoolVar(&o.noWARC, "no-warc", false, "write no WARC capture and record no snapshot reference")
	f.StringVar(&o.workMem, "work-mem", "", "the memory the selection of targets may take, e.g. 8GiB: it refuses more citations than that holds (default $PROVGRAPH_WORK_MEM, else three quarters of the machine's or cgroup's memory)")
	return cmd
}

func runResolve(cmd *cobra.Command, o resolveOptions) error {
	var sel ingest.TargetOptions
	sel.OnlyUnresolved = o.onlyUnresolved
	if o.since != "" {
		t, err := time.Parse(time.RFC3339Nano, o.since)
		if err != nil {
			return usagef("--since %q: want an RFC 3339 time such as 2026-11-01T00:00:00Z", o.since)
		}
		sel.Since = t
	}
	switch {
	case o.maxRedirects < 0:
		return usagef("--max-redirects %d: want 0 or more (0 follows no redirect)", o.maxRedirects)
	case o.timeout <= 0:
		return usagef("--timeout %v: want a positive duration", o.timeout)
	case o.concurrency < 1:
		return usagef("--concurrency %d: want 1 or more", o.concurrency)
	case o.perHost < 1:
		return usagef("--per-host %d: want 1 or more", o.perHost)
	case strings.TrimSpace(o.userAgent) == "":
		return usagef("--user-agent is empty: requests must say who makes them")
	}
	if o.noWARC && o.warc != "" {
		return usagef("--warc %q and --no-warc: give one", o.warc)
	}
	workMem, err := workMemFlag(o.workMem)
	if err != nil {
		return err
	}
	if workMem <= 0 {
		workMem = memoryLimit() / 4 * 3
	}
	if workMem > 0 {
		sel.MaxSelected = int(max(1, workMem/resolveBytesPerCitation))
	}
	// The targets first: a selection refused, or empty, fetches nothing
	// and makes no WARC directory.
	if _, err := os.Stat(o.db); err != nil {
		return fmt.Errorf("resolve: %w (ingest citations into it first)", err)
	}
	// Read-only: a refused selection leaves the file as it was.
	ro, err := o.open(true)
	if err != nil {
		return err
	}
	stderr := cmd.ErrOrStderr()
	targets, counts, err := ingest.ResolveTargets(cmd.Context(), ro.Quads, sel)
	ro.Close()
	if errors.Is(err, ingest.ErrTooManyTargets) {
		return usagef("resolve of %s: %v: the selected citations' facts and targets take about %d bytes each, and --work-mem (or three quarters of the machine's memory) is %s. Select fewer (--since, --only-unresolved) or give a larger --work-mem; nothing was fetched", o.db, err, resolveBytesPerCitation, formatBytes(workMem))
	}
	if err != nil {
		return err
	}
	skipped := skippedText(counts)
	if len(targets) == 0 {
		fmt.Fprintf(stderr, "resolve: nothing to resolve among %s%s\n", render.Plural(counts.Citations, "citation"), skipped)
		return nil
	}
	fopts := &resolve.Options{
		Policy: model.FetchPolicy{
			MaxRedirects: o.maxRedirects, Timeout: o.timeout, UserAgent: o.userAgent,
			AllowPrivate: o.allowPrivate,
		},
		NoRedirects: o.maxRedirects == 0,
		PerHost:     o.perHost,
	}
	run := ingest.NewResolveRun(time.Now())
	var warc *capture.Writer
	if !o.noWARC {
		dir := o.warc
		if dir == "" {
			dir = warcDir(o.db)
		}
		{
			v, _, _ := strings.Cut(version(), " ")
			w, err := capture.Open(capture.Options{Dir: dir, Software: "provgraph/" + v, Run: run.Value})
			if err != nil {
				return fmt.Errorf("resolve: the WARC directory: %w (--warc chooses another, --no-warc writes none)", err)
			}
			warc = w
			fopts.Capture = w
			defer func() {
				if err := w.Close(); err != nil {
					fmt.Fprintf(cmd.ErrOrStderr(), "resolve: closing the WARC file: %v\n", err)
				}
			}()
		}
	}
	fetcher, err := resolve.New(fopts)
	if err != nil {
		return service.UsageError{Err: err}
	}
	defer fetcher.Close()
	// The targets name citations by their nodes, which a writer in
	// between could only add to: they stay valid.
	st, err := o.open(false)
	if err != nil {
		return err
	}
	defer st.Close()
	opts := ingest.ResolveOptions{
		Policy: fetcher.Policy(), FetchBody: fetcher.FetchBody, Concurrency: o.concurrency, Run: run,
	}
	if warc != nil {
		opts.Sync = warc.Sync
	}
	var bar *progressbar.ProgressBar
	if f, ok := stderr.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		bar = progressbar.NewOptions(len(targets),
			progressbar.OptionSetWriter(stderr),
			progressbar.OptionSetDescription("resolve"),
			progressbar.OptionShowCount(),
			progressbar.OptionSetItsString("URLs"),
			progressbar.OptionShowIts(),
			progressbar.OptionThrottle(100*time.Millisecond),
			progressbar.OptionClearOnFinish())
		opts.Progress = func(done, total int) { bar.Set(done) }
	}
	sum, err := ingest.Resolve(cmd.Context(), st.Quads, targets, opts)
	if bar != nil {
		bar.Finish()
	}
	if err != nil && !errors.Is(err, ingest.ErrInterrupted) {
		return err
	}
	failed := 0
	var reasons []string
	for _, oc := range model.Outcomes[1:] {
		if n := sum.Outcomes[oc]; n > 0 {
			failed += n
			reasons = append(reasons, fmt.Sprintf("%s %d", oc, n))
		}
	}
	why := ""
	if len(reasons) > 0 {
		why = " (" + strings.Join(reasons, ", ") + ")"
	}
	fmt.Fprintf(stderr, "resolve: %d of %s retrieved for %s%s: %d resolved, %d redirected, %d cross-host, %d failed%s; %s added, %s\n",
		sum.Retrievals, render.Plural(sum.Targets, "URL"), render.Plural(sum.Citations, "citation"), skipped, sum.Outcomes[model.OutcomeOK], sum.Redirected, sum.CrossHost, failed, why,
		render.Plural(sum.QuadsAdded, "quad"), sum.Elapsed.Round(time.Millisecond))
	if sum.Extractions > 0 {
		where := "no capture (--no-warc)"
		if warc != nil {
			where = "captures in " + o.warcPath()
		}
		fmt.Fprintf(stderr, "resolve: %s recorded, %s (%d found); %s\n",
			render.Plural(sum.Extractions, "extraction"), render.Plural(sum.Passages, "passage check"), sum.Found, where)
	}
	if blocked := sum.Outcomes[model.OutcomeBlockedAddress] + sum.Outcomes[model.OutcomeBlockedPort]; blocked > 0 && !o.allowPrivate {
		ports := strings.ReplaceAll(strings.Trim(fmt.Sprint(fetcher.Policy().Ports), "[]"), " ", ", ")
		fmt.Fprintf(stderr, "resolve: the guard refused %s (blocked-address, blocked-port): a non-public address, or a port other than %s. They are recorded as failed, and --only-unresolved retries them; --allow-private lifts the guard, for servers on this machine.\n",
			render.Plural(blocked, "retrieval"), ports)
	}
	if err == nil {
		if err := service.KeepRecords(cmd.Context(), st.Quads, stderr, o.db); err != nil {
			return err
		}
	}
	if service.IsInterrupt(cmd.Context(), err) {
		fmt.Fprintf(stderr, "resolve interrupted: the %s finished are saved and run %s is marked interrupted\n", render.Plural(sum.Retrievals, "retrieval"), sum.Run.Value)
		return service.InterruptError{Err: err, Said: true}
	}
	if err != nil {
		return fmt.Errorf("%w; the %s finished are saved and run %s is marked interrupted", err, render.Plural(sum.Retrievals, "retrieval"), sum.Run.Value)
	}
	return nil
}

// skippedText says which citations were left out, and why.
func skippedText(c ingest.TargetCounts) string {
	var parts []string
	if c.Rejected > 0 {
		parts = append(parts, fmt.Sprintf("%d with a raw URL no policy accepted", c.Rejected))
	}
	if c.Resolved > 0 {
		parts = append(parts, fmt.Sprintf("%d resolved already", c.Resolved))
	}
	retried := ""
	if c.Retried > 0 {
		retried = fmt.Sprintf(", %d of them again after failed retrievals", c.Retried)
	}
	if c.Before > 0 {
		parts = append(parts, fmt.Sprintf("%d observed before --since", c.Before))
	}
	if len(parts) == 0 {
		return retried
	}
	return retried + " (skipped: " + strings.Join(parts, ", ") + ")"
}

// warcPath is the capture directory the options choose.
func (o resolveOptions) warcPath() string {
	if o.warc != "" {
		return o.warc
	}
	return warcDir(o.db)
}
