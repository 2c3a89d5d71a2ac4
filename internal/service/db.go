package service

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/provgraph/provgraph/internal/graph"
	"github.com/provgraph/provgraph/internal/graph/citestore"
	"github.com/provgraph/provgraph/internal/normalize"
	"github.com/provgraph/provgraph/internal/query"
	"github.com/provgraph/provgraph/internal/review"
)

// DB names a database and how to open it: what the --db and
// --lock-timeout flags of every command give.
type DB struct {
	// Path is the database file.
	Path string
	// LockTimeout is how long to wait for another process to release the
	// file; zero or less fails at once (unlike graph.Options, whose zero
	// means its default wait).
	LockTimeout time.Duration
}

// Open opens the store, read-only (shared lock, never created) or for
// writing. Its errors wrap graph.ErrLocked and graph.ErrCorrupt where they
// apply, for Classify; a locked error names the provgraph serve that holds
// the file, when one does (WriteServerInfo).
func (d DB) Open(readOnly bool) (*graph.Store, error) {
	return d.open(&graph.Options{ReadOnly: readOnly})
}

// openOnce opens the store read-only for one query that reads a few
// thousand pages at random (a lineage, one group from the view): its
// reads go by pread (graph.Options.ReadOnce).
func (d DB) openOnce() (*Store, error) {
	g, err := d.open(&graph.Options{ReadOnly: true, ReadOnce: true})
	if err != nil {
		return nil, err
	}
	return &Store{Backend: citestore.New(g), Quads: g}, nil
}

func (d DB) open(o *graph.Options) (*graph.Store, error) {
	timeout := d.LockTimeout
	if timeout <= 0 {
		timeout = -1 // graph.Options: fail at once (its zero means the default wait)
	}
	o.LockTimeout = timeout
	st, err := graph.Open(d.Path, o)
	if err != nil {
		return nil, lockedByServer(d.Path, err)
	}
	return st, nil
}

// QueryError marks the error of a query: a policy the database does not
// hold is the caller's to fix (Usage); a damaged database or a failed read
// keeps its own kind (Damaged, Internal).
func QueryError(err error) error {
	if errors.Is(err, query.ErrNoPolicy) {
		return UsageError{err}
	}
	return err
}

// Load opens the database read-only and loads a snapshot under policy
// (NAME@VERSION, NAME, a digest, or "" for the policy of the latest ingest
// or renormalize run).
func (d DB) Load(ctx context.Context, policy string) (*query.Snapshot, error) {
	st, err := d.Open(true)
	if err != nil {
		return nil, err
	}
	defer st.Close()
	snap, err := query.Load(ctx, citestore.New(st), policy)
	if err != nil {
		return nil, QueryError(err)
	}
	return snap, nil
}

// Groups finds the review groups of the database under policy, ready to
// be written a group at a time (render.Groups).
func (d DB) Groups(ctx context.Context, policy string, opts query.GroupOptions) (*query.GroupSet, error) {
	set, done, err := d.GroupsFrom(ctx, policy, opts, GroupsScan)
	if err == nil {
		done()
	}
	return set, err
}

// GroupsRead says how GroupsFrom reads the database.
type GroupsRead struct {
	// View reads the groups from the database's grouping view of the
	// policy, a batch of keys at a time (query.LoadGroupsFromView), when
	// it keeps one this build can use: memory is then bounded by the
	// batch, not by the database. Otherwise every citation is loaded
	// (query.LoadGroups).
	View bool
	// Batch and Mapped are the citations of a batch from the view and
	// the bytes of the file its reads keep mapped (query.ViewRead).
	Batch  int
	Mapped int64
	// ScanLimit, when View is set and positive, reads from the view only
	// when its rows carry member records (a listing from them reads no
	// citation, and took 5.7-7.0 s against the scan's 8.6-12.5 s at a
	// million citations, 109 s against 88 s at ten million in a third of
	// the memory) or the view holds more citations than ScanLimit: below
	// it, the scan's memory is allowed for its speed.
	ScanLimit int64
	// Strict never scans past the working memory: with View, when the
	// database keeps no view usable for the policy (or opts asks for
	// query.GroupOptions.Detail, which a view does not keep), GroupsFrom
	// fails with a Usage error naming what to do (view rebuild, --read
	// scan, more --work-mem) rather than scan, when ScanLimit is 0 (the
	// view was asked for) or the citations are more than ScanLimit.
	Strict bool
}

// ErrScanTooBig is returned (wrapped, Usage) by GroupsFrom when a Strict
// read would have to group more citations in memory than it allows.
var ErrScanTooBig = errors.New("grouping holds every citation in memory")

// GroupsScan loads every citation (query.LoadGroups).
var GroupsScan = GroupsRead{}

// GroupsFrom is Groups, read as how says. done closes the database, once
// the set is written (a set read from a view reads the database while it
// is written); it is nil on error.
func (d DB) GroupsFrom(ctx context.Context, policy string, opts query.GroupOptions, how GroupsRead) (*query.GroupSet, func(), error) {
	st, err := d.Open(true)
	if err != nil {
		return nil, nil, err
	}
	cs := citestore.New(st)
	var set *query.GroupSet
	if how.View {
		big := true
		if how.ScanLimit > 0 {
			big, err = viewPreferred(ctx, cs, how.ScanLimit)
		}
		if err == nil && big {
			set, err = query.LoadGroupsFromView(ctx, cs, policy, opts, query.ViewRead{Batch: how.Batch, Mapped: how.Mapped})
		}
	}
	if err == nil && set == nil && how.View && how.Strict {
		err = d.scanAllowed(ctx, cs, policy, opts, how)
	}
	if err == nil && set == nil {
		set, err = query.LoadGroups(ctx, cs, policy, opts)
	}
	if err != nil {
		st.Close()
		return nil, nil, QueryError(err)
	}
	if !set.FromView() {
		st.Close()
		return set, func() {}, nil
	}
	return set, func() { st.Close() }, nil
}

// scanAllowed says whether a Strict read may group every citation in
// memory, the view being of no use: nil when it may, else an error
// naming the way on.
func (d DB) scanAllowed(ctx context.Context, cs *citestore.Store, policy string, opts query.GroupOptions, how GroupsRead) error {
	n, err := cs.CitationCount(ctx)
	if err != nil {
		return err
	}
	if n == 0 || how.ScanLimit > 0 && n <= how.ScanLimit {
		return nil
	}
	pol, err := query.PolicyOf(ctx, cs, policy)
	if err != nil {
		return err
	}
	size := ""
	if how.ScanLimit > 0 {
		size = fmt.Sprintf(" (%d citations, more than the %d the working memory holds: --work-mem)", n, how.ScanLimit)
	}
	if opts.Detail {
		return UsageError{fmt.Errorf("--engine and --since read every citation's engine and observation time, which the grouping view does not keep, and %w%s: give --read scan, or more --work-mem, to group them in memory", ErrScanTooBig, size)}
	}
	return UsageError{fmt.Errorf("%s keeps no grouping view of policy %s that this provgraph can read (none, or one made by another normalization engine), and without one %w%s: run 'provgraph view rebuild --db %s --policy %s' once (it writes the view in bounded memory, and ingest keeps it current), or give --read scan to group them in memory",
		d.Path, pol.String(), ErrScanTooBig, size, d.Path, pol.Digest)}
}

// ViewUsable reports whether the database keeps a grouping view of policy
// (as Load takes it) that this build can read (query.ViewUsable).
func (d DB) ViewUsable(ctx context.Context, policy string) (bool, error) {
	st, err := d.Open(true)
	if err != nil {
		return false, err
	}
	defer st.Close()
	ok, err := query.ViewUsable(ctx, citestore.New(st), policy)
	return ok, QueryError(err)
}

// CitationCount returns how many citations the database holds (from a
// complete view's rows, or the pg:Citation instances), without loading
// them: a command that holds every citation checks it against its
// working memory first.
func (d DB) CitationCount(ctx context.Context) (int64, error) {
	st, err := d.Open(true)
	if err != nil {
		return 0, err
	}
	defer st.Close()
	return citestore.New(st).CitationCount(ctx)
}

// viewPreferred reports whether some complete grouping view of the
// database keeps member records or holds more than n rows (one per
// citation).
func viewPreferred(ctx context.Context, cs *citestore.Store, n int64) (bool, error) {
	infos, err := cs.Views(ctx)
	if err != nil {
		return false, err
	}
	for _, v := range infos {
		if v.Complete && (v.Members || v.Rows > n) {
			return true, nil
		}
	}
	return false, nil
}

// LineageRequest asks for the lineage of one citation (ID) or of every
// citation whose raw URL is exactly URL (ByURL).
type LineageRequest struct {
	ID    string
	URL   string
	ByURL bool
	query.LineageOptions
}

// Lineage returns the lineages asked for. No such citation is Rejected,
// and names the database; no such policy is Usage.
func (d DB) Lineage(ctx context.Context, req LineageRequest) ([]*query.Lineage, error) {
	ls, _, err := d.lineage(ctx, req, false)
	return ls, err
}

// LineageReviewed returns the lineages asked for, as Lineage does, and the
// database's review decisions, read on the same opening of the file: the
// lineage command shows both, and a second opening cost it about a tenth
// of its time at ten million citations (opening, the decisions' index
// runs found again, closing).
func (d DB) LineageReviewed(ctx context.Context, req LineageRequest) ([]*query.Lineage, *review.Index, error) {
	return d.lineage(ctx, req, true)
}

func (d DB) lineage(ctx context.Context, req LineageRequest, decisions bool) ([]*query.Lineage, *review.Index, error) {
	open := d.openOnce
	if req.Scope == query.ScopeDatabase {
		open = func() (*Store, error) { return d.OpenStore(true) }
	}
	st, err := open()
	if err != nil {
		return nil, nil, err
	}
	defer st.Close()
	ls, err := lineageOn(ctx, d, st, req)
	if err != nil || !decisions {
		return ls, nil, err
	}
	ix, err := review.Load(ctx, st.Quads)
	if err != nil {
		return nil, nil, err
	}
	return ls, ix, nil
}

func lineageOn(ctx context.Context, d DB, st *Store, req LineageRequest) ([]*query.Lineage, error) {
	var err error
	var ls []*query.Lineage
	if req.ByURL {
		ls, err = query.LineageOfURL(ctx, st.Backend, req.URL, &req.LineageOptions)
	} else {
		var l *query.Lineage
		l, err = query.LineageOf(ctx, st.Backend, req.ID, &req.LineageOptions)
		ls = []*query.Lineage{l}
	}
	switch {
	case errors.Is(err, query.ErrNoCitation):
		return nil, InputError{fmt.Errorf("%w in %s", err, d.Path)}
	case err != nil:
		return nil, QueryError(err)
	}
	return ls, nil
}

// StatsRequest asks for the counts of the database under Policy, or with
// Explain (as stats --explain takes it: groups, keys, domain:D, ...) for
// the items behind one count.
type StatsRequest struct {
	Policy    string
	MaxShared int
	Explain   string
	// Read says how the counts without Explain read the groups
	// (GroupsFrom): from the grouping view, their memory is the view
	// read's. An Explain that lists groups, or rejected, reads them so;
	// the others load every citation whole (ExplainFromView reads those
	// by value from the view).
	Read GroupsRead
	// Tmp is the directory of the lines' spool (query.LineSpool),
	// os.TempDir() when empty.
	Tmp string
}

// StatsResult is the answer to a StatsRequest: Stats without Explain,
// Lines with it.
type StatsResult struct {
	Policy   query.PolicyRef
	Warnings []string // about the database (incomplete runs), for the caller to show
	Stats    *query.Stats
	// Lines are the lines of an Explain, spooled to disk as they are
	// found (at ten million citations they name every citation): the
	// caller closes them.
	Lines *query.LineSpool
}

// spoolLines spools lines.
func spoolLines(dir string, lines []query.ExplainLine) (*query.LineSpool, error) {
	sp, err := query.NewLineSpool(dir)
	if err != nil {
		return nil, err
	}
	for _, l := range lines {
		if err := sp.Add(l); err != nil {
			sp.Close()
			return nil, err
		}
	}
	if err := sp.Done(); err != nil {
		sp.Close()
		return nil, err
	}
	return sp, nil
}

// Stats counts the database. An Explain that names no count is Usage.
// Without Explain the groups are counted as they are written
// (query.StreamStats), read as req.Read says: no citation is held.
func (d DB) Stats(ctx context.Context, req StatsRequest) (*StatsResult, error) {
	if req.Explain == "" {
		return d.streamStats(ctx, req)
	}
	if match, ok, err := query.GroupExplainer(req.Explain); ok {
		if err != nil {
			return nil, UsageError{err}
		}
		return d.explainGroups(ctx, req, match)
	}
	if req.Explain == "rejected" {
		return d.explainRejected(ctx, req)
	}
	snap, err := d.Load(ctx, req.Policy)
	if err != nil {
		return nil, err
	}
	rep := query.Groups(snap, query.GroupOptions{MaxShared: req.MaxShared})
	res := &StatsResult{Policy: snap.Policy, Warnings: rep.Warnings}
	lines, err := query.Explain(snap, rep, req.Explain)
	if err != nil {
		return nil, UsageError{err}
	}
	if res.Lines, err = spoolLines(req.Tmp, lines); err != nil {
		return nil, err
	}
	return res, nil
}

// ExplainFromView is Stats with an explanation by value (keys, raw-urls,
// resolved-urls: query.ExplainsValues) read from the grouping view of the
// policy, its values sorted on disk (query.ExplainFromView), the view's
// pages kept mapped as how says: nil when the database keeps no view of
// the policy that can answer. The caller closes the spool.
func (d DB) ExplainFromView(ctx context.Context, policy, what string, how GroupsRead, sort query.DiskSort) (*query.LineSpool, error) {
	st, err := d.Open(true)
	if err != nil {
		return nil, err
	}
	defer st.Close()
	sp, err := query.ExplainFromView(ctx, citestore.New(st), policy, what, query.ViewRead{Batch: how.Batch, Mapped: how.Mapped}, sort)
	if err != nil {
		return nil, QueryError(err)
	}
	return sp, nil
}

// explainRejected is Stats with Explain "rejected": the rejected
// citations as a listing of the groups reports them, the groups read as
// req.Read says and none of them kept: memory is the rejected citations,
// not every citation. The lines are Explain's on a snapshot, in the same
// order.
func (d DB) explainRejected(ctx context.Context, req StatsRequest) (*StatsResult, error) {
	set, done, err := d.GroupsFrom(ctx, req.Policy, query.GroupOptions{MaxShared: req.MaxShared, MinSize: 1}, req.Read)
	if err != nil {
		return nil, err
	}
	defer done()
	rep, err := set.Write(ctx, func(buf []byte, _ *query.Group) []byte { return buf }, func([]byte) error { return nil })
	if err != nil {
		return nil, QueryError(err)
	}
	sp, err := query.NewLineSpool(req.Tmp)
	if err != nil {
		return nil, err
	}
	res := &StatsResult{Policy: set.Policy(), Warnings: set.Warnings(), Lines: sp}
	err = rep.EachRejected(ctx, func(r query.RejectedURL) error { return sp.Add(query.RejectedLine(r)) })
	if err == nil {
		err = sp.Done()
	}
	if err != nil {
		sp.Close()
		return nil, QueryError(err)
	}
	return res, nil
}

// explainGroups is Stats with an Explain that lists groups: the groups
// read as req.Read says (from the grouping view a batch at a time, when
// it does), the selected ones kept as their lines: memory is the lines
// (the ids of the listed groups' members), not every citation. The lines
// are Explain's on a snapshot, in the same order.
func (d DB) explainGroups(ctx context.Context, req StatsRequest, match func(*query.Group) bool) (*StatsResult, error) {
	set, done, err := d.GroupsFrom(ctx, req.Policy, query.GroupOptions{MaxShared: req.MaxShared, MinSize: 1}, req.Read)
	if err != nil {
		return nil, err
	}
	defer done()
	sp, err := query.NewLineSpool(req.Tmp)
	if err != nil {
		return nil, err
	}
	res := &StatsResult{Policy: set.Policy(), Lines: sp}
	_, err = set.Write(ctx, func(buf []byte, g *query.Group) []byte {
		if !match(g) {
			return buf
		}
		l := query.ExplainLine{Item: g.Key, Group: g.ID, Members: make([]string, 0, len(g.Members))}
		for _, m := range g.Members {
			l.Members = append(l.Members, m.CitationID)
		}
		b, _ := json.Marshal(l) // strings and a slice of them always marshal
		return append(buf, b...)
	}, func(b []byte) error {
		dec := json.NewDecoder(bytes.NewReader(b))
		for dec.More() {
			var l query.ExplainLine
			if err := dec.Decode(&l); err != nil {
				return err
			}
			if err := sp.Add(l); err != nil {
				return err
			}
		}
		return nil
	})
	if err == nil {
		err = sp.Done()
	}
	if err != nil {
		sp.Close()
		return nil, QueryError(err)
	}
	res.Warnings = set.Warnings()
	return res, nil
}

// streamStats is Stats without Explain: every group (MinSize 1) written
// to a query.StatsCounter, and the distinct URLs counted by a lean scan.
func (d DB) streamStats(ctx context.Context, req StatsRequest) (*StatsResult, error) {
	st, err := d.Open(true)
	if err != nil {
		return nil, err
	}
	cs := citestore.New(st)
	pol, err := query.PolicyOf(ctx, cs, req.Policy)
	var raw, resolved int
	if err == nil {
		raw, resolved, err = query.DistinctURLs(ctx, cs, pol.Digest)
	}
	st.Close()
	if err != nil {
		return nil, QueryError(err)
	}
	set, done, err := d.GroupsFrom(ctx, req.Policy, query.GroupOptions{MaxShared: req.MaxShared, MinSize: 1}, req.Read)
	if err != nil {
		return nil, err
	}
	defer done()
	s, err := query.StreamStats(ctx, set, raw, resolved)
	if err != nil {
		return nil, QueryError(err)
	}
	return &StatsResult{Policy: s.Policy, Warnings: set.Warnings(), Stats: s}, nil
}

// PolicyDiff compares the review groups of the database under policies a
// and b; a policy the database does not hold is Usage. Each policy's
// groups are read as how says (GroupsFrom), one policy after the other,
// and joined on disk (query.PolicyDiffer): memory is that of reading one
// grouping, the sorts' working set and the changes found.
func (d DB) PolicyDiff(ctx context.Context, a, b string, opts query.GroupOptions, how GroupsRead, sort query.DiskSort) (*query.PolicyDiff, error) {
	df, err := query.NewPolicyDiffer(ctx, sort)
	if err != nil {
		return nil, err
	}
	defer df.Close()
	for _, p := range []string{a, b} {
		set, done, err := d.GroupsFrom(ctx, p, opts, how)
		if err != nil {
			return nil, err
		}
		err = df.Add(ctx, set)
		done()
		if err != nil {
			return nil, QueryError(err)
		}
	}
	diff, err := df.Diff(ctx)
	return diff, QueryError(err)
}

// LoadPolicy loads the normalization policy a request names ("default",
// "lenient" or a TOML file); a missing or invalid one is the caller's to
// fix (Usage), its error naming the line.
func LoadPolicy(name string) (*normalize.Policy, error) {
	p, err := normalize.LoadPolicy(name)
	if err != nil {
		return nil, UsageError{err}
	}
	return p, nil
}
