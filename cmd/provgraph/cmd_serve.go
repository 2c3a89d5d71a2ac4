package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/provgraph/provgraph/internal/model"
	"github.com/provgraph/provgraph/internal/server"
	"github.com/provgraph/provgraph/internal/service"
)

type serveOptions struct {
	dbOptions
	addr         string
	readOnly     bool
	tokenFile    string
	policy       string
	ingestPolicy string
	maxShared    int
	queryTimeout time.Duration
	queryRows    int
	maxIngest    int64
	workMem      string
	tmp          string
	stateMem     string
	bounded      bool
	mappedMem    string
}

// serveBytesPerCitation and serveReadOnlyBytesPerCitation are about what
// serve's state takes a citation at its peak: every review group with its
// members' detail and the decisions, and, when the server writes, the
// state after a write computed beside the one served; the first GET
// /api/stats after a write counts a snapshot of every citation beside the
// groups. A million citations (bench/gencite): 3.36 GB of peak RSS once
// warm, 3.37 GB after a decision (which keeps the groups), 6.26 GB after
// an ingest of 20 citations through the server; read-only, 3.04 GB once
// warm and 5.93 GB after the stats (`VmHWM` of /proc/PID/status).
const (
	serveBytesPerCitation         = 7000
	serveReadOnlyBytesPerCitation = 6000
)

// serveMappedMem is --mapped-mem's default. Pages of the file a server
// reads stay mapped until released, and where the page cache holds the
// file in large folios one read maps up to 2 MiB: a bounded server's page
// of 100 groups (6,900 citations) at ten million citations mapped about a
// gigabyte more each. Releasing them costs the faults that map them again
// (bench/aroundprof, the same pages read in process: 2.2 s a page at
// 256 MiB, 1.2 s at 1 GiB, 0.75 s at 2 GiB, 0.42 s with no limit and 5 GB
// mapped).
const serveMappedMem = "1GiB"

// Server limits that are not flags.
const (
	serveMaxHeader   = 32 << 10
	serveReadHeader  = 10 * time.Second
	serveIdle        = 2 * time.Minute
	serveReadWrite   = 30 * time.Minute // an ingest body and its run
	minTokenLength   = 16
	serveShutdownMax = 30 * time.Second
)

func newServeCommand() *cobra.Command {
	var o serveOptions
	cmd := &cobra.Command{
		Use:   "serve [flags]",
		Short: "Serve the review workbench (web UI and JSON API) on the database",
		Long: `Serve holds the database open and serves, from one process, the review
workbench: a web UI at / (the review queue in risk order with filters, a
group page with the members side by side, their relations, decisions and
history and forms to decide the group, a pair of its members or one of its
relations, keyboard shortcuts, each citation's lineage
drawn as SVG, the statistics) and the JSON API under /api/ that README.md
documents (groups, one group, decisions, lineage, stats, ingest, Gizmo
queries).

While the server holds the database, other provgraph commands find it
locked (exit status 4) and name the server's address: use the API
instead. Reads keep answering from the last committed state while an ingest
runs through the server.

Safety: the server binds to loopback (127.0.0.1:8080) by default. Any other
--addr needs --token-file: a file of lines "TOKEN REVIEWER-NAME" (a token
of at least 16 characters, then the name the token's decisions are
recorded under; # starts a comment). Every request must then carry a token
(Authorization: Bearer TOKEN, or the UI's sign-in). --read-only serves no
writes. Forms carry a CSRF token; request bodies (64 KiB, --max-ingest for
ingest), headers (32 KiB) and query time (--query-timeout) are bounded;
responses carry a Content-Security-Policy, nosniff and frame denial; every
page and script is embedded in the binary. A decision is answered 201 only
once committed.

Every POST /api/ingest reads --work-mem and --tmp as provgraph ingest
does: its check of citation ids holds --work-mem (default
$PROVGRAPH_WORK_MEM, else 64MiB) and past it sorts the ids on disk in
--tmp (default $TMPDIR, else /tmp), where the request body is spooled
too; each of these files is unlinked as soon as it is created. A --tmp
removed while the server runs fails each ingest (500, naming it) with
nothing written.

Serve holds every review group of the database in memory, about 7,000
bytes a citation at its peak (the state after a write is computed beside
the one served, and the statistics a snapshot beside the groups; 6,000
with --read-only), when they fit in --state-mem
(default three quarters of the machine's or cgroup's memory): every filter
and order of the queue then answers at once. A database whose citations
would take more is served in bounded memory instead, as --bounded asks
(--bounded=false refuses it, exit 2): the server holds no group and reads
what each request shows from the database's grouping view and its group
records (those of provgraph queue), in milliseconds whatever the size of
the database:
  - the queue pages in the groups' own order (by smallest key; the order of
    provgraph groups and provgraph queue), by verdict and domain
    (?verdict=, ?domain=, read on through the records until a page is
    full), and one group is found by id or key (?id=, ?key=); the filters
    that need what the records do not keep (engine, since, review state,
    sort=risk or size, all=true) answer 400 and say to run provgraph
    groups with them once the server is stopped;
  - group pages, decisions and lineages are those of a server holding
    every group;
  - GET /api/stats gives the groups, the queued groups and the groups by
    verdict from the records, and the review counts ({"bounded": true, ...});
    the counts of citations, URLs and domains are provgraph stats'.
A server that writes refreshes the group records at start, or builds them
(a whole grouping read from the view: 78 s and 1.4 GiB at ten million
citations), and keeps them current after each ingest through it (while
it builds them again, the queue answers 503 with Retry-After); a
read-only one refuses to start without current records and names the
command that builds them (exit 1). The policy served is the one chosen at
start. A bounded server pages the UI's queue from the records alone
(reading only the groups with a decided member); GET /api/groups returns
whole groups, each with every member, read from the view.

The pages of the database file a server reads stay mapped into it, and
counted in its resident memory, until released; on a page cache of large
folios one read maps up to 2 MiB. The server keeps at most --mapped-mem
(default 1GiB; 0: no limit) mapped, releasing them while requests read;
more reads large pages faster (a bounded server's page of 100 whole groups
at ten million citations: 2.2 s at 256MiB, 1.2 s at 1GiB, 0.75 s at 2GiB,
0.42 s with no limit and 5 GB mapped).

Ctrl-C or SIGTERM stops the server: requests in progress finish first (up
to 30 s), then the database is closed.

` + exitHelp(
			"  0  the server stopped on Ctrl-C or SIGTERM",
			"  1  serving in bounded memory needs what the database lacks: a grouping view\n     of the policy, or, with --read-only, current group records (the message\n     says how to write them)",
			"  2  usage error: bad flag, a non-loopback --addr without --token-file, a bad token file, no such policy, a bad --work-mem or a --tmp that is not a directory, a database too large for --state-mem with --bounded=false",
			"  3  I/O or internal error: the address cannot be bound, the database cannot be opened",
			exitLineLocked,
			exitLineCorrupt),
		Example: `  provgraph serve --db example.db
  provgraph serve --db example.db --addr 0.0.0.0:8443 --token-file reviewers.txt
  provgraph serve --db example.db --read-only
  provgraph serve --db big.db --bounded`,
		Args: exactArgs(0),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runServe(cmd, o)
		},
	}
	o.dbOptions.addFlags(cmd)
	f := cmd.Flags()
	f.StringVar(&o.addr, "addr", "127.0.0.1:8080", "address to listen on; a non-loopback address needs --token-file")
	f.BoolVar(&o.readOnly, "read-only", false, "serve no writes: no decisions, no ingest (the database is opened read-only)")
	f.StringVar(&o.tokenFile, "token-file", "", `file of "TOKEN REVIEWER-NAME" lines; every request must then carry one of the tokens`)
	f.StringVar(&o.policy, "policy", "", "the policy whose groups to serve: NAME@VERSION, NAME or a digest (default: the policy used by the latest ingest or renormalize run)")
	f.StringVar(&o.ingestPolicy, "ingest-policy", "default", `policy POST /api/ingest normalizes with: "default", "lenient" or a TOML policy file`)
	f.IntVar(&o.maxShared, "max-shared", model.DefaultMaxShared, "as for groups")
	f.DurationVar(&o.queryTimeout, "query-timeout", server.DefaultQueryTimeout, "longest run of one POST /api/query")
	f.IntVar(&o.queryRows, "query-rows", server.DefaultQueryRows, "most results of one POST /api/query")
	f.Int64Var(&o.maxIngest, "max-ingest", server.DefaultMaxIngest, "largest POST /api/ingest body, in bytes")
	f.StringVar(&o.workMem, "work-mem", "", "as for ingest, for each POST /api/ingest: "+ingestWorkMemUsage)
	f.StringVar(&o.tmp, "tmp", "", tmpUsage+", for POST /api/ingest's spool of the request body and its run's files")
	f.StringVar(&o.stateMem, "state-mem", "", fmt.Sprintf("the memory the served state may take, e.g. 16GiB: a database whose citations would take more, at about %d bytes each (%d with --read-only), is served in bounded memory (default three quarters of the machine's or cgroup's memory)", serveBytesPerCitation, serveReadOnlyBytesPerCitation))
	f.StringVar(&o.mappedMem, "mapped-mem", serveMappedMem, "how much of the database file the server keeps mapped, and so counted in its resident memory, e.g. 2GiB (0: no limit); more reads large pages faster")
	f.BoolVar(&o.bounded, "bounded", false, "hold no group: answer each request from the grouping view and the group records (default: when the groups would not fit in --state-mem); --bounded=false refuses such a database instead")
	return cmd
}

// readTokens reads a token file: "TOKEN REVIEWER-NAME" per line.
func readTokens(path string) (map[string]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, usagef("--token-file: %v", err)
	}
	defer f.Close()
	tokens := map[string]string{}
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		tok, name, ok := strings.Cut(line, " ")
		name = strings.TrimSpace(name)
		switch {
		case !ok || name == "":
			return nil, usagef("%s:%d: want TOKEN REVIEWER-NAME", path, n)
		case len(tok) < minTokenLength:
			return nil, usagef("%s:%d: token shorter than %d characters", path, n, minTokenLength)
		case tokens[tok] != "":
			return nil, usagef("%s:%d: token given twice", path, n)
		}
		tokens[tok] = name
	}
	if err := sc.Err(); err != nil {
		return nil, usagef("--token-file: %v", err)
	}
	if len(tokens) == 0 {
		return nil, usagef("--token-file %s: no token in it", path)
	}
	return tokens, nil
}

// loopback reports whether addr's host is a loopback address or name.
func loopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

func runServe(cmd *cobra.Command, o serveOptions) error {
	if o.queryRows < 1 || o.queryTimeout <= 0 || o.maxIngest < 1 {
		return usagef("--query-rows, --query-timeout and --max-ingest must be positive")
	}
	workMem, err := workMemFlag(o.workMem)
	if err != nil {
		return err
	}
	if err := tmpDirFlag(o.tmp); err != nil {
		return err
	}
	var tokens map[string]string
	if o.tokenFile != "" {
		var err error
		if tokens, err = readTokens(o.tokenFile); err != nil {
			return err
		}
	} else if !loopback(o.addr) {
		return usagef("--addr %s is not a loopback address: give --token-file so that only named reviewers can use the server", o.addr)
	}
	pol, err := service.LoadPolicy(o.ingestPolicy)
	if err != nil {
		return err
	}
	bounded, err := serveBounded(cmd, o)
	if err != nil {
		return err
	}
	mapped, err := parseBytes(o.mappedMem)
	if err != nil {
		return usagef("--mapped-mem %v", err)
	}
	if mapped == 0 {
		mapped = -1 // graph.Options: no limit
	}
	st, err := o.service().OpenServed(o.readOnly, mapped)
	if err != nil {
		return err
	}
	defer st.Close()
	stderr := cmd.ErrOrStderr()
	opts := server.Options{DB: o.db, Policy: o.policy, MaxShared: o.maxShared, ReadOnly: o.readOnly, Bounded: bounded != "", Tokens: tokens, IngestPolicy: pol,
		MaxIngest: o.maxIngest, QueryTimeout: o.queryTimeout, QueryRows: o.queryRows, WorkMem: workMem, TempDir: o.tmp,
		Notice: func(line string) { fmt.Fprintf(stderr, "provgraph serve: %s\n", line) }}
	if bounded != "" {
		opts.Notice(bounded)
	}
	if hold := testHold("serve-decide", stderr); hold != nil {
		opts.BeforeCommit = func(string) { hold() }
	}
	if hold := testHold("serve-ingest-batch", stderr); hold != nil {
		opts.AfterIngestBatch = hold
	}
	srv, err := server.New(st.Quads, opts)
	if err != nil {
		return err
	}
	if err := srv.Warm(cmd.Context()); err != nil {
		return err
	}
	ln, err := net.Listen("tcp", o.addr)
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	url := "http://" + ln.Addr().String()
	remove, err := service.WriteServerInfo(o.db, service.ServerInfo{Addr: url, PID: os.Getpid()})
	if err != nil {
		ln.Close()
		return err
	}
	defer remove()
	hs := &http.Server{
		Handler:           srv.Handler(),
		ReadHeaderTimeout: serveReadHeader,
		ReadTimeout:       serveReadWrite,
		WriteTimeout:      serveReadWrite,
		IdleTimeout:       serveIdle,
		MaxHeaderBytes:    serveMaxHeader,
	}
	fmt.Fprintf(stderr, "provgraph serve: %s on %s (pid %d)\n", o.db, url, os.Getpid())
	done := make(chan error, 1)
	go func() { done <- hs.Serve(ln) }()
	select {
	case err := <-done:
		return fmt.Errorf("serve: %w", err)
	case <-cmd.Context().Done():
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(cmd.Context()), serveShutdownMax)
	defer cancel()
	if err := hs.Shutdown(ctx); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("shutdown: %w", err)
	}
	fmt.Fprintln(stderr, "provgraph serve: stopped")
	return st.Close()
}

// serveBounded says whether the server holds no group (Options.Bounded):
// "" to hold them, else the line that says why it does not. --bounded
// asks for it; without the flag, a database whose citations serve's state
// would hold in more memory than --state-mem allows (serveBytesPerCitation
// each) is served bounded, and with --bounded=false it is refused: better
// a clear refusal at start than a server killed for memory after minutes
// of loading, or at the first write, whose new state is computed beside
// the one served.
func serveBounded(cmd *cobra.Command, o serveOptions) (string, error) {
	room := memoryLimit() / 4 * 3
	if o.stateMem != "" {
		n, err := parseBytes(o.stateMem)
		if err != nil {
			return "", usagef("--state-mem %v", err)
		}
		room = n
	}
	asked := cmd.Flags().Changed("bounded")
	if asked && o.bounded {
		return "serving in bounded memory (--bounded): the queue in key order, from the group records", nil
	}
	if room <= 0 {
		return "", nil // the machine's memory is not known
	}
	if _, err := os.Stat(o.db); errors.Is(err, fs.ErrNotExist) {
		return "", nil // a new database: open says what becomes of it
	}
	n, err := o.service().CitationCount(cmd.Context())
	if err != nil {
		return "", err
	}
	per := int64(serveBytesPerCitation)
	if o.readOnly {
		per = serveReadOnlyBytesPerCitation
	}
	need := n * per
	if need <= room {
		return "", nil
	}
	if asked {
		return "", usagef("--bounded=false: serve would hold every review group in memory, about %d bytes a citation (%d with --read-only): the %d citations of %s would take about %s, more than the state's memory (%s: --state-mem, or three quarters of the machine's memory). A larger --state-mem holds them anyway; without --bounded=false the server answers in bounded memory from the grouping view",
			per, serveReadOnlyBytesPerCitation, n, o.db, formatBytes(need), formatBytes(room))
	}
	return fmt.Sprintf("the %d citations of %s would take about %s held in memory, more than the state's memory (%s: --state-mem, or three quarters of the machine's memory): serving in bounded memory, the queue in key order from the group records (serve --help says what that changes)",
		n, o.db, formatBytes(need), formatBytes(room)), nil
}
