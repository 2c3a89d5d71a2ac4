package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/provgraph/provgraph/internal/ingest"
	"github.com/provgraph/provgraph/internal/render"
	"github.com/provgraph/provgraph/internal/service"
	"github.com/provgraph/provgraph/internal/store"
)

// dbOptions are the flags every command that opens the database shares.
type dbOptions struct {
	db          string
	lockTimeout time.Duration
}

func (o *dbOptions) addFlags(cmd *cobra.Command) {
	cmd.Flags().StringVar(&o.db, "db", "provgraph.db", "database file (must exist)")
	cmd.Flags().DurationVar(&o.lockTimeout, "lock-timeout", 5*time.Second, "how long to wait for another process to release the database (0: do not wait)")
}

// service is the database the flags name, for internal/service.
func (o *dbOptions) service() service.DB {
	return service.DB{Path: o.db, LockTimeout: o.lockTimeout}
}

func (o *dbOptions) open(readOnly bool) (*service.Store, error) {
	return o.service().OpenStore(readOnly)
}

type ingestOptions struct {
	dbOptions
	policy      string
	skipInvalid bool
	format      string
	batch       int
	workMem     string
	tmp         string
	noView      bool
	noCompact   bool
	progress    string
}

// progressEvery is how often --progress lines reports, at most.
const progressEvery = 10 * time.Second

// progressLines returns an ingest.Progress callback that writes a line
// to w for the first report of each phase, then at most every
// progressEvery, and at the end: what a long run started in the
// background (nohup, a service) shows of where it is. command names the
// command (ingest, renormalize), unit what it counts (lines, citations).
func progressLines(w io.Writer, command, unit string, start time.Time) func(ingest.Progress) {
	var last time.Time
	phase := ""
	return func(p ingest.Progress) {
		now := time.Now()
		if p.Phase == phase && p.Phase != "done" && now.Sub(last) < progressEvery && p.Lines != p.TotalLines {
			return
		}
		phase, last = p.Phase, now
		took := now.Sub(start).Round(time.Second)
		switch p.Phase {
		case "validate":
			fmt.Fprintf(w, "%s: validating: %d %s read, %s\n", command, p.Lines, unit, took)
		case "write":
			fmt.Fprintf(w, "%s: writing: %d of %d %s, %d quads added, %s\n", command, p.Lines, p.TotalLines, unit, p.QuadsAdded, took)
		case "view":
			fmt.Fprintf(w, "%s: writing the grouping view: %d of %d citations, %s\n", command, p.Lines, p.TotalLines, took)
		case "done":
			fmt.Fprintf(w, "%s: done: %d %s, %d quads added, %s\n", command, p.TotalLines, unit, p.QuadsAdded, took)
		}
	}
}

// progressFunc returns the ingest.Progress callback --progress mode asks
// for on w ("auto": a bar on a terminal): a bar per phase that counts,
// lines, or nil for none; and the function that ends it (a bar is
// finished).
func progressFunc(w io.Writer, mode, command, unit string) (func(ingest.Progress), func()) {
	switch {
	case mode == "lines":
		return progressLines(w, command, unit, time.Now()), func() {}
	case mode == "bar" || mode == "auto" && isTerminal(w):
	default:
		return nil, func() {}
	}
	var bar *progressbar.ProgressBar
	phase := ""
	finish := func() {
		if bar != nil {
			bar.Finish()
		}
	}
	return func(p ingest.Progress) {
		if p.Phase != "write" && p.Phase != "view" {
			return
		}
		if bar == nil || p.Phase != phase {
			if bar != nil {
				bar.Finish()
			}
			desc, its := command, unit
			if p.Phase == "view" {
				desc, its = command+": grouping view", "citations"
			}
			phase = p.Phase
			bar = progressbar.NewOptions(p.TotalLines,
				progressbar.OptionSetWriter(w),
				progressbar.OptionSetDescription(desc),
				progressbar.OptionShowCount(),
				progressbar.OptionSetItsString(its),
				progressbar.OptionShowIts(),
				progressbar.OptionThrottle(100*time.Millisecond),
				progressbar.OptionClearOnFinish())
		}
		bar.Set(p.Lines)
	}, finish
}

// validProgress refuses a --progress that is not one.
func validProgress(mode string) error {
	switch mode {
	case "auto", "bar", "lines", "none":
		return nil
	}
	return usagef("--progress %q: want auto, bar, lines or none", mode)
}

// workMemEnv names the variable that gives --work-mem its default.
const workMemEnv = "PROVGRAPH_WORK_MEM"

// parseBytes reads a size in bytes: a whole number, alone or followed by
// KiB, MiB or GiB.
func parseBytes(s string) (int64, error) {
	num, unit := s, int64(1)
	for _, u := range []struct {
		suffix string
		n      int64
	}{{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}} {
		if rest, ok := strings.CutSuffix(s, u.suffix); ok {
			num, unit = rest, u.n
			break
		}
	}
	n, err := strconv.ParseInt(num, 10, 64)
	if err != nil || n < 0 || n > math.MaxInt64/unit {
		return 0, fmt.Errorf("%q: want a number of bytes, alone or followed by KiB, MiB or GiB (e.g. 64MiB)", s)
	}
	return n * unit, nil
}

func newIngestCommand(stdin io.Reader) *cobra.Command {
	var o ingestOptions
	cmd := &cobra.Command{
		Use:   "ingest [flags] FILE|-",
		Short: "Load citation observations (JSON Lines) or RDF into the database",
		Long: `Ingest reads citation observations, one JSON object per line (see README.md
for the fields, and testdata/citation.schema.json for a JSON Schema; raw_url
and observed_at are required), normalizes each raw URL under the policy, and
stores everything as PROV-O triples. "-" reads standard input. A line holds
at most 16 MiB (16777216 bytes) before its newline; a UTF-8 byte-order mark
at the start of the file is skipped.

Nothing is lost and nothing is overwritten:
  - the whole input is validated first; a bad line stops the run with
    file:line: field: reason, and nothing of the run is written
    (--skip-invalid writes the valid lines and lists the others); a field
    given twice or in another case ("RAW_URL"), text that is not valid
    UTF-8 and lone surrogate escapes ("\uD800") are bad lines, as they
    could not be stored as given;
  - what is written is exactly what was validated: an input file that
    changes during the run is an error (exit status 3), and none of the
    change is written;
  - a database file that did not exist is created only once JSON Lines
    input has been validated;
  - a raw URL the policy rejects is stored anyway, with its error;
  - a citation_id that already names different content is an error;
  - ingesting the same input again adds nothing but the record of the run;
  - an interrupted run (Ctrl-C, kill -9) leaves a readable database, and
    running the same input again completes it.

Grouping views (see 'provgraph view'): each batch writes the view rows of
the citations it adds in its own transaction, into every policy's view the
database keeps; a new database keeps one of the run's policy from its
first batch, unless --no-view. A view adds to the CPU and the file of a
bulk load (the README's figures give both at a million and ten million
citations), so a load of millions may leave it out and run 'provgraph view
rebuild' after. A database without a view of the policy (written by an
earlier provgraph) gets none; ingest says so once on standard error, with
the 'provgraph view rebuild' command to run. RDF input removes the views
(its statements can change any citation) and says so. A view's rows are
kept in sorted runs that each batch adds to, and every lookup of groups
and lineage probes each run; ingest ends by merging each map of every view
whose rows are in 16 runs or more into one run, as 'provgraph view
compact' does (about 80 s at ten million citations, in bounded memory;
unless --no-compact, which names that command instead). The citations are
committed before it starts: an interrupted compaction leaves the view
answering as before, and 'provgraph view compact' finishes it; if another
process has the database open by then, ingest leaves the compaction to
that command and says so. In the same way, when the quad indexes POS and
OSP hold 16 runs or more to merge (a bulk load of a million citations or
more), ingest first runs 'provgraph compact', which merges them into runs
of up to 134 million quads (about 2 minutes at ten million citations, in
bounded memory), so that a lineage from a cold page cache probes two runs
instead of 85.

Memory and temporary files: the validation pass checks every citation_id
against the rest of the input within --work-mem (40 bytes an id; the
default, 64MiB, holds about 1.6 million); past it the ids are sorted in
runs on disk and merged, which finds the same conflicts. Its temporary
files, the spool of standard input and the parsed statements of RDF input
go in --tmp (default $TMPDIR, else /tmp); the sort's files and the RDF
spool are unlinked as soon as they are created, so no exit leaves them
behind, and the spool of standard input is removed at the end, Ctrl-C and
SIGTERM included.

With --format nt, nq or ttl it loads RDF instead, such as a provgraph
export, keeping every literal exactly, with the same promises: a statement
that does not parse (or is not UTF-8, or escapes a surrogate) stops the run
with file:line:column before anything is written. A line of N-Triples or
N-Quads, and a Turtle statement, may be at most 16 MiB. Blank nodes become
IRIs under https://w3id.org/provgraph/id/.well-known/genid/ named by the
input's digest and the label, so two inputs never share one. RDF is loaded
whole or not at all: --skip-invalid is for jsonl only.

` + exitHelp(
			exitLineOK,
			"  1  input rejected: an invalid line stops the run before anything is\n     written (with --skip-invalid the valid lines are written and the others\n     listed), or a citation_id already names different content",
			"  2  usage error: bad flag, argument or policy, or a missing input file",
			exitLineFailure,
			exitLineLocked,
			exitLineCorrupt),
		Example: `  provgraph ingest --db cites.db testdata/citations.jsonl
  some-producer | provgraph ingest --db cites.db -
  provgraph ingest --db copy.db --format nq export.nq`,
		Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runIngest(cmd, o, args[0], stdin)
		},
	}
	o.dbOptions.addFlags(cmd)
	cmd.Flags().Lookup("db").Usage = "database file (created when missing)"
	f := cmd.Flags()
	f.StringVar(&o.policy, "policy", "default", `policy: "default", "lenient" (in any letter case) or a TOML policy file of at most 1 MiB`)
	f.BoolVar(&o.skipInvalid, "skip-invalid", false, "write the valid records and report the invalid lines (exit status 1) instead of stopping")
	f.StringVar(&o.format, "format", "jsonl", "input format: jsonl (citation observations), nt, nq or ttl (RDF)")
	f.IntVar(&o.batch, "batch", ingest.DefaultBatchQuads, "quads per transaction (at least 1)")
	f.StringVar(&o.workMem, "work-mem", "", ingestWorkMemUsage)
	f.StringVar(&o.tmp, "tmp", "", tmpUsage)
	f.StringVar(&o.progress, "progress", "auto", "progress on standard error: bar (a progress bar), lines (a line every 10 s, for a run whose standard error is a file or a log), none, or auto (bar on a terminal, none otherwise)")
	f.BoolVar(&o.noCompact, "no-compact", false, "leave the quad indexes' and the grouping views' runs as written, however many (by default, ingest ends by merging the quad indexes' runs when one holds 16 or more to merge, as 'provgraph compact' does, and each map of every view whose rows are in 16 runs or more into one, as 'provgraph view compact' does)")
	f.BoolVar(&o.noView, "no-view", false, "a new database keeps no grouping view (a bulk load runs about a third faster; build it later with 'provgraph view rebuild'); a database that keeps views goes on keeping them")
	return cmd
}

func runIngest(cmd *cobra.Command, o ingestOptions, input string, stdin io.Reader) error {
	switch o.format {
	case "jsonl", ingest.FormatNTriples, ingest.FormatNQuads, ingest.FormatTurtle:
	default:
		return usagef("--format %q: want jsonl, nt, nq or ttl", o.format)
	}
	if err := validProgress(o.progress); err != nil {
		return err
	}
	if o.batch < 1 {
		return usagef("--batch %d: want the number of quads per transaction, at least 1 (default %d)", o.batch, ingest.DefaultBatchQuads)
	}
	if o.skipInvalid && o.format != "jsonl" {
		return usagef("--skip-invalid applies to --format jsonl only: RDF input is loaded whole or not at all")
	}
	workMem, err := o.workMemBytes()
	if err != nil {
		return err
	}
	if err := tmpDirFlag(o.tmp); err != nil {
		return err
	}
	pol, err := service.LoadPolicy(o.policy)
	if err != nil {
		return err
	}
	path, name := input, input
	if input == "-" && o.format != "jsonl" {
		// RDF is read once (its parsed statements are spooled), so
		// standard input is not copied.
		name = "<stdin>"
	} else if input == "-" {
		// Standard input is spooled to a temporary file: the input is read
		// twice, once to validate and once to write.
		tmp, err := os.CreateTemp(o.tmp, "provgraph-ingest-*.jsonl")
		if err != nil {
			return fmt.Errorf("spool standard input: %w", err)
		}
		defer os.Remove(tmp.Name())
		if err := copyContext(cmd.Context(), tmp, stdin); err != nil {
			tmp.Close()
			return fmt.Errorf("spool standard input: %w", err)
		}
		if err := tmp.Close(); err != nil {
			return fmt.Errorf("spool standard input: %w", err)
		}
		path, name = tmp.Name(), "<stdin>"
	} else if _, err := os.Stat(input); err != nil {
		return service.UsageError{Err: err}
	}
	stderr := cmd.ErrOrStderr()
	opts := ingest.Options{Policy: pol, SkipInvalid: o.skipInvalid, BatchQuads: o.batch, WorkMem: workMem, TempDir: o.tmp, NoView: o.noView}
	var endProgress func()
	opts.Progress, endProgress = progressFunc(stderr, o.progress, "ingest", "lines")
	if hold := testHold("ingest-batch", stderr); hold != nil {
		progress := opts.Progress
		opts.Progress = func(p ingest.Progress) {
			if progress != nil {
				progress(p)
			}
			if p.Phase == "write" {
				hold()
			}
		}
	}
	tuneGCForWrites()
	ctx := cmd.Context()
	if hold := testHoldUntilDone(ctx, "ingest-validate", stderr); hold != nil {
		ctx = holdContext{ctx, hold}
	}
	var recordsLog bytes.Buffer // said after the summary
	req := service.IngestRequest{Path: path, Name: name, Format: o.format, Options: opts, Log: &recordsLog}
	if input == "-" && o.format != "jsonl" {
		req.Stdin = stdin
	}
	sum, err := o.service().Ingest(ctx, req)
	endProgress()
	for _, re := range sum.Invalid {
		fmt.Fprintf(stderr, "rejected %s\n", render.EscapeLine(re.Error()))
	}
	if err != nil && !errors.Is(err, ingest.ErrInvalidRecords) {
		if sum.Run.Value != "" && !errors.Is(err, ingest.ErrInputChanged) {
			were := "were"
			if sum.QuadsAdded == 1 {
				were = "was"
			}
			fmt.Fprintf(stderr, "ingest stopped; %s %s written. Run the same command again to complete run %s.\n", render.Plural(sum.QuadsAdded, "quad"), were, sum.Run.Value)
			if service.IsInterrupt(cmd.Context(), err) {
				return service.InterruptError{Err: err, Said: true}
			}
		}
		return err
	}
	what := "record"
	if o.format != "jsonl" {
		what = "statement"
	}
	resumed := ""
	if sum.Resumed {
		resumed = " (completing an interrupted run)"
	}
	fmt.Fprintf(stderr, "ingest %s: %s, %s, %s rejected by policy %s (stored with their errors), %s added, %s%s\n",
		name, render.Plural(sum.Records, what), render.Plural(len(sum.Invalid), "invalid line"), render.Plural(sum.URLRejected, "raw URL"), render.EscapeText(pol.Name()), render.Plural(sum.QuadsAdded, "quad"), sum.Elapsed.Round(time.Millisecond), resumed)
	stderr.Write(recordsLog.Bytes())
	switch {
	case sum.ViewsDropped:
		fmt.Fprintf(stderr, "the grouping views were removed (RDF statements can change any citation); queries scan until you run: provgraph view rebuild --db %s\n", render.EscapeText(o.db))
	case sum.NoView:
		why := "written by an earlier provgraph, or the policy is new to it"
		if o.noView {
			why = "--no-view"
		}
		fmt.Fprintf(stderr, "the database keeps no grouping view of policy %s (%s); queries scan until you run: provgraph view rebuild --db %s --policy %s\n", render.EscapeText(pol.Name()), why, render.EscapeText(o.db), render.EscapeText(pol.Digest()))
	}
	if !sum.ViewsDropped {
		if cerr := compactAfterWrite(cmd, "ingest", &o.dbOptions, o.progress, o.noCompact, ""); cerr != nil {
			return cerr
		}
	}
	if err != nil {
		return service.ErrRejected
	}
	return nil
}

// compactAfterWrite merges the runs of each grouping view whose rows are
// kept in compactHintRuns runs or more, at the end of what (ingest,
// renormalize) that wrote into it: only the view of the policy with
// digest only, or every view when only is empty (ingest writes into
// each). Every lookup of groups and lineage probes each run, so a view
// left in 85 runs (ten million citations) made groups take 74-77 s
// against 40-47 s compacted. With noCompact it only names the command.
// The writes are committed by then, so an interrupt stops the compaction
// alone (which leaves the view answering as before) and is reported as
// such; a database another process opened in between is left for a
// later view compact, the exit status unchanged. progress is the
// command's --progress.
func compactAfterWrite(cmd *cobra.Command, what string, o *dbOptions, progress string, noCompact bool, only string) error {
	stderr := cmd.ErrOrStderr()
	if done, err := compactIndexesAfterWrite(cmd, what, o, progress, noCompact); err != nil || !done {
		return err
	}
	for _, v := range viewsInRuns(context.WithoutCancel(cmd.Context()), o, only) {
		if noCompact {
			fmt.Fprintln(stderr, compactHint(o.db, v.Policy.Digest, v.RowRuns))
			continue
		}
		if done, err := compactView(cmd, what, o, progress, v); err != nil || !done {
			return err
		}
	}
	return nil
}

// compactIndexRuns is from how many runs to merge in a quad index ingest
// and renormalize end with provgraph compact: a compaction then merges at
// least that many runs of some two million tuples (a batch of 50,000
// citations makes about one) with at most one merged run, smaller than
// compactRunTuples, so each tuple is rewritten a few times at most, and a
// lookup probes at most that many runs plus the settled ones.
var compactIndexRuns = 16

// compactIndexesAfterWrite runs provgraph compact for compactAfterWrite
// when a quad index holds compactIndexRuns runs or more to merge (with
// noCompact it names the command instead); false when it was interrupted
// or the database was locked, which it has said.
func compactIndexesAfterWrite(cmd *cobra.Command, what string, o *dbOptions, progress string, noCompact bool) (bool, error) {
	stderr := cmd.ErrOrStderr()
	n, err := o.service().RunsToCompact()
	if err != nil || n < compactIndexRuns {
		return true, nil // a failed count is for provgraph check to report
	}
	if noCompact {
		fmt.Fprintf(stderr, "the quad indexes are kept in %d runs or more, each of which a lookup probes: provgraph compact --db %s merges them (about 2 minutes at ten million citations)\n", n, render.EscapeText(o.db))
		return true, nil
	}
	debug.FreeOSMemory()
	tuneGCForCompact()
	start := time.Now()
	fmt.Fprintf(stderr, "compacting the quad indexes (%d runs, each of which a lookup probes) into runs of up to 134 million quads\n", n)
	if progress == "auto" && !isTerminal(stderr) {
		progress = "none"
	}
	report, end := checkProgress(stderr, "compact", progress, start)
	done, err := o.service().CompactIndexes(cmd.Context(), report)
	end()
	if err != nil {
		again := fmt.Sprintf("the %s is complete and every quad reads as before; provgraph compact --db %s finishes the compaction", what, render.EscapeText(o.db))
		switch {
		case service.IsInterrupt(cmd.Context(), err):
			fmt.Fprintf(stderr, "compact interrupted: %s\n", again)
			return false, service.InterruptError{Err: err, Said: true}
		case service.Classify(err) == service.Locked:
			fmt.Fprintf(stderr, "quad indexes not compacted: %v; %s\n", err, again)
			return false, nil
		}
		return false, fmt.Errorf("compact after the %s: %w (%s)", what, err, again)
	}
	for _, c := range done {
		if c.Transactions > 0 {
			fmt.Fprintf(stderr, "quad index %s compacted: %s now in %d\n", c.Index, render.Plural(c.RunsBefore, "run"), c.RunsAfter)
		}
	}
	fmt.Fprintf(stderr, "quad indexes compacted in %s\n", time.Since(start).Round(time.Millisecond))
	return true, nil
}

// compactView compacts the view v for compactAfterWrite; false when the
// database was locked, which it has said.
func compactView(cmd *cobra.Command, what string, o *dbOptions, progress string, v store.ViewInfo) (bool, error) {
	stderr := cmd.ErrOrStderr()
	d := v.Policy.Digest
	// What the writes held is garbage now; hand it back before the
	// compaction maps the view's pages, so that the two do not add up.
	debug.FreeOSMemory()
	start := time.Now()
	last := start
	fmt.Fprintf(stderr, "compacting the grouping view of %s (rows in %d runs, each of which a lookup probes; %d to merge) into one run per map\n", render.EscapeText(v.Policy.String()), v.RowRuns, v.RowRunsToMerge)
	quiet := progress == "none" || progress == "auto" && !isTerminal(stderr)
	beforeCompact(o.db)
	_, maps, err := o.service().CompactView(cmd.Context(), d, func(m service.CompactedMap) {
		if !quiet && time.Since(last) >= progressEvery {
			last = time.Now()
			fmt.Fprintf(stderr, "view compact: map %s: %s written\n", m.Map, render.Plural(int(m.Entries), "entry"))
		}
	})
	if err != nil {
		again := fmt.Sprintf("the "+what+" is complete and the grouping view answers as before (a map is replaced only when its merge is done); provgraph view compact --db %s --policy %s finishes the compaction", render.EscapeText(o.db), d)
		switch {
		case service.IsInterrupt(cmd.Context(), err):
			fmt.Fprintf(stderr, "view compact interrupted: %s\n", again)
			return false, service.InterruptError{Err: err, Said: true}
		case service.Classify(err) == service.Locked:
			// Another process opened the database after the writer closed
			// it: the compaction is an optimisation and can wait.
			fmt.Fprintf(stderr, "view not compacted: %v; %s\n", err, again)
			return false, nil
		}
		return false, fmt.Errorf("view compact after the %s: %w (%s)", what, err, again)
	}
	merged := 0
	for _, m := range maps {
		merged += m.Runs
	}
	fmt.Fprintf(stderr, "grouping view compacted: %s merged into one per map, %s\n", render.Plural(merged, "run"), time.Since(start).Round(time.Millisecond))
	return true, nil
}

// workMemBytes is --work-mem, or $PROVGRAPH_WORK_MEM, in bytes; 0 for the
// default.
func (o ingestOptions) workMemBytes() (int64, error) { return workMemFlag(o.workMem) }

// workMemFlag reads a --work-mem flag value, or $PROVGRAPH_WORK_MEM when
// the flag is empty, in bytes (0 when neither is set). ingest and groups
// read it the same way, so that one setting bounds both.
func workMemFlag(flag string) (int64, error) {
	s, what := flag, "--work-mem"
	if s == "" {
		s, what = os.Getenv(workMemEnv), workMemEnv
	}
	if s == "" {
		return 0, nil
	}
	n, err := parseBytes(s)
	if err == nil && n < ingest.MinWorkMem {
		err = fmt.Errorf("%q: want at least 16KiB", s)
	}
	if err != nil {
		return 0, usagef("%s %v", what, err)
	}
	return n, nil
}

// tmpDirFlag checks a --tmp flag value: empty (os.TempDir()) or an
// existing directory. ingest and serve check it before opening the
// database, so that a typo fails at once rather than at the first spill.
func tmpDirFlag(dir string) error {
	if dir == "" {
		return nil
	}
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return usagef("--tmp %q: want an existing directory for temporary files (default $TMPDIR, else /tmp)", dir)
	}
	return nil
}

// The usage of --work-mem and --tmp, which ingest and serve share.
const (
	ingestWorkMemUsage = "memory for the check of citation ids, e.g. 256MiB (at least 16KiB; default $" + workMemEnv + ", else 64MiB); past it the ids are sorted on disk in --tmp"
	tmpUsage           = "directory for temporary files (default $TMPDIR, else /tmp)"
)

// copyContext copies src to dst until EOF or until ctx is done: a read from
// a pipe whose writer neither writes nor closes blocks, and an interrupt or
// SIGTERM must still end the command (and remove the spool). The copying
// goroutine is left blocked in its read; the process is about to exit.
func copyContext(ctx context.Context, dst io.Writer, src io.Reader) error {
	done := make(chan error, 1)
	go func() {
		_, err := io.Copy(dst, src)
		done <- err
	}()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}

// beforeCompact is called with the database's path as a compaction after
// a write begins, once the writing command has closed the file: a test opens the
// database there, as another process could.
var beforeCompact = func(string) {}

// isTerminal reports whether w is a terminal, where --progress auto shows
// progress.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}
