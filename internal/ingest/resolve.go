package ingest

import (
	"context"
	"errors"
	"fmt"
	"math/bits"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/provgraph/provgraph/internal/graph"
	"github.com/provgraph/provgraph/internal/graph/citestore"
	"github.com/provgraph/provgraph/internal/model"
	"github.com/provgraph/provgraph/internal/normalize"
	"github.com/provgraph/provgraph/internal/vocab"
)

// ResolveTarget is one URL to retrieve: a raw URL and the citations of it
// that the retrieval will be linked from.
type ResolveTarget struct {
	Raw     string     // the raw URL's exact text
	RawNode graph.Term // its node
	// URL is what to fetch: the URL Standard's href of the raw URL
	// (resolved against the citation's base URL) as a stored normalization
	// parsed it, without its fragment.
	URL       string
	Citations []graph.Term
	// CitedText holds, beside each citation, the passage it attributed to
	// the source (pg:citedText), or "".
	CitedText []string
}

// TargetOptions selects the citations to resolve. The zero value selects
// every citation whose raw URL a stored normalization accepted.
type TargetOptions struct {
	// OnlyUnresolved skips citations that have a retrieval that did not
	// fail: one whose outcome is ok, or that has no outcome (a retrieval
	// given in the input without one). A citation whose every retrieval
	// failed is selected again; its failed retrievals are kept.
	OnlyUnresolved bool
	Since          time.Time // when not zero, only citations observed at or after it
	// MaxSelected, when positive, is the most citations ResolveTargets
	// reads the facts of: past it, it returns ErrTooManyTargets.
	MaxSelected int
}

// TargetCounts says how the citations were selected.
type TargetCounts struct {
	Citations int // citations in the database
	Selected  int // citations to be linked to a retrieval
	Rejected  int // skipped: no normalization accepted the raw URL
	Resolved  int // skipped by OnlyUnresolved: a retrieval did not fail
	Retried   int // selected by OnlyUnresolved although every retrieval of theirs failed
	Before    int // skipped by Since
	RawURLs   int // distinct targets
}

// ErrTooManyTargets is returned (wrapped) by ResolveTargets when more
// citations are selected than TargetOptions.MaxSelected.
var ErrTooManyTargets = errors.New("more citations selected than the working memory holds")

// ResolveTargets reads the citations of st and returns, for those opts
// selects, one target per raw URL and fetch URL, sorted by URL: citations
// that show the same raw URL share one retrieval.
//
// It decides in two steps, so that its memory is the selected citations'
// and not the database's (reading every citation's facts at once took
// 3.9 GB at a million citations, and ten million would not fit). First
// every citation is decided by its term id, with sets of one bit per term
// (selection, below: some 12 MB each at ten million citations) filled by
// passes over the POS index in object order, which hold nothing else but
// the distinct observation times when opts.Since is set (4 bytes each):
// which normalizations generated a key and which were rejected, which
// citations a normalization accepted, which retrievals did not fail, which
// citations were observed before Since. Then the facts of the selected
// citations alone are read, by the same passes, and their terms decoded
// in one ordered pass over the dictionary. A fact a citation has several
// of is taken as the first in object order, as a Match over the
// predicate gives it. When opts.MaxSelected is set and more citations are
// selected, it returns ErrTooManyTargets before reading their facts.
func ResolveTargets(ctx context.Context, st *graph.Store, opts TargetOptions) ([]ResolveTarget, TargetCounts, error) {
	var targets []ResolveTarget
	var counts TargetCounts
	selected := 0
	err := st.Read(func(r *graph.Reader) error {
		sel, err := selectTargets(ctx, r, opts, &counts)
		if err != nil {
			return err
		}
		if selected = sel.n; opts.MaxSelected > 0 && sel.n > opts.MaxSelected {
			return nil
		}
		targets, err = sel.targets(ctx, r, opts, &counts)
		return err
	})
	if err != nil {
		return nil, counts, err
	}
	if opts.MaxSelected > 0 && selected > opts.MaxSelected {
		return nil, counts, fmt.Errorf("%d of the %d citations selected, %d at most: %w", selected, counts.Citations, opts.MaxSelected, ErrTooManyTargets)
	}
	counts.RawURLs = len(targets)
	return targets, counts, nil
}

// bitSet is a set of term ids, a bit each.
type bitSet []uint64

func newBitSet(max graph.ID) bitSet   { return make(bitSet, max/64+1) }
func (b bitSet) add(id graph.ID)      { b[id/64] |= 1 << (id % 64) }
func (b bitSet) has(id graph.ID) bool { return b[id/64]&(1<<(id%64)) != 0 }
func (b bitSet) each(fn func(graph.ID) error) error {
	for w, word := range b {
		for word != 0 {
			i := bits.TrailingZeros64(word)
			if err := fn(graph.ID(w*64 + i)); err != nil {
				return err
			}
			word &= word - 1
		}
	}
	return nil
}

// selection is the first step of ResolveTargets: the citations selected
// (cands, n of them), and what the second step needs of the rest.
type selection struct {
	cands bitSet // the citations selected
	n     int
	text  bitSet // nodes with a pg:text: keys and raw URLs
	errs  bitSet // rejected normalizations (a pg:errorCode)
	ret   bitSet // citations with a retrieval
}

// selectTargets decides every citation, counting those it skips, in the
// order ResolveTargets always has: a citation no normalization accepted
// is Rejected, then one with a retrieval that did not fail is Resolved
// (OnlyUnresolved), then one observed before Since is Before.
func selectTargets(ctx context.Context, r *graph.Reader, opts TargetOptions, counts *TargetCounts) (*selection, error) {
	max := r.MaxID()
	id := func(p string) graph.ID { return r.ID(graph.IRI(p)) }
	pairs := func(pred string, fn func(s, o graph.ID)) error { return limitedPairs(ctx, r, pred, fn) }
	sel := &selection{cands: newBitSet(max), text: newBitSet(max), errs: newBitSet(max), ret: newBitSet(max)}
	cites, keyed, accepted := newBitSet(max), newBitSet(max), newBitSet(max)
	steps := []struct {
		pred string
		fn   func(s, o graph.ID)
	}{
		{vocab.Cites, func(c, _ graph.ID) { cites.add(c) }},
		{vocab.Text, func(n, _ graph.ID) { sel.text.add(n) }},
		// A normalization's key is a node with a text it generated.
		{vocab.ProvWasGeneratedBy, func(k, n graph.ID) {
			if sel.text.has(k) {
				keyed.add(n)
			}
		}},
		{vocab.ErrorCode, func(n, _ graph.ID) { sel.errs.add(n) }},
		{vocab.NormalizedAs, func(c, n graph.ID) {
			if !sel.errs.has(n) && keyed.has(n) {
				accepted.add(c)
			}
		}},
	}
	for _, s := range steps {
		if err := pairs(s.pred, s.fn); err != nil {
			return nil, err
		}
	}
	// A retrieval did not fail when its first outcome is ok, or it has
	// none (given in the input without one).
	resolved := newBitSet(max)
	if opts.OnlyUnresolved {
		ok, err := literalsWhere(ctx, r, id(vocab.Outcome), func(v string) bool { return v == model.OutcomeOK })
		if err != nil {
			return nil, fmt.Errorf("resolve: reading %s: %w", vocab.Outcome, err)
		}
		seen, fine := newBitSet(max), newBitSet(max)
		err = pairs(vocab.Outcome, func(ret, o graph.ID) {
			if !seen.has(ret) {
				seen.add(ret)
				if ok.has(o) {
					fine.add(ret)
				}
			}
		})
		if err != nil {
			return nil, err
		}
		err = pairs(vocab.RetrievedIn, func(c, ret graph.ID) {
			sel.ret.add(c)
			if !seen.has(ret) || fine.has(ret) {
				resolved.add(c)
			}
		})
		if err != nil {
			return nil, err
		}
	}
	// Observed before Since: the first observation time, in object order,
	// does not parse or is before it; so is a citation without one.
	observed, inTime := newBitSet(max), newBitSet(max)
	if !opts.Since.IsZero() {
		before, err := literalsWhere(ctx, r, id(vocab.ObservedAt), func(v string) bool {
			t, err := time.Parse(time.RFC3339Nano, v)
			return err != nil || t.Before(opts.Since)
		})
		if err != nil {
			return nil, fmt.Errorf("resolve: reading %s: %w", vocab.ObservedAt, err)
		}
		err = pairs(vocab.ObservedAt, func(c, o graph.ID) {
			if !observed.has(c) {
				observed.add(c)
				if !before.has(o) {
					inTime.add(c)
				}
			}
		})
		if err != nil {
			return nil, err
		}
	}
	err := cites.each(func(c graph.ID) error {
		counts.Citations++
		switch {
		case !accepted.has(c):
			counts.Rejected++
		case opts.OnlyUnresolved && resolved.has(c):
			counts.Resolved++
		case !opts.Since.IsZero() && !inTime.has(c):
			counts.Before++
		default:
			sel.cands.add(c)
			sel.n++
		}
		return nil
	})
	return sel, err
}

// selectMapped is how much of the file the selection's passes keep
// mapped: they read every run of the POS index, and at ten million
// citations left 1.04 GB of it mapped when not limited.
const selectMapped = 256 << 20

// limitedPairs is Reader.Pairs of the predicate pred, the mapped pages of
// the file kept under selectMapped as it goes.
func limitedPairs(ctx context.Context, r *graph.Reader, pred string, fn func(s, o graph.ID)) error {
	n := 0
	err := r.Pairs(ctx, r.ID(graph.IRI(pred)), func(s, o graph.ID) {
		if n++; n%65536 == 0 {
			r.LimitMapped(selectMapped)
		}
		fn(s, o)
	})
	if err != nil {
		return fmt.Errorf("resolve: reading %s: %w", pred, err)
	}
	return nil
}

// literalsWhere returns the objects of predicate pred whose text keep
// accepts, decoding each distinct object once, in id order.
func literalsWhere(ctx context.Context, r *graph.Reader, pred graph.ID, keep func(string) bool) (bitSet, error) {
	out := newBitSet(r.MaxID())
	var objs []graph.ID
	err := r.Pairs(ctx, pred, func(_, o graph.ID) {
		if len(objs) == 0 || objs[len(objs)-1] != o {
			if objs = append(objs, o); len(objs)%65536 == 0 {
				r.LimitMapped(selectMapped)
			}
		}
	})
	if err != nil {
		return nil, err
	}
	err = r.Terms(ctx, objs, func(id graph.ID, t graph.Term) error {
		if keep(t.Value) {
			out.add(id)
		}
		return nil
	})
	return out, err
}

// targets is the second step of ResolveTargets: the facts of the
// selected citations, read as the first step read every citation's
// decisions, and their targets.
func (sel *selection) targets(ctx context.Context, r *graph.Reader, opts TargetOptions, counts *TargetCounts) ([]ResolveTarget, error) {
	pairs := func(pred string, fn func(s, o graph.ID)) error { return limitedPairs(ctx, r, pred, fn) }
	max := r.MaxID()
	rawOf := make(map[graph.ID]graph.ID, sel.n)
	citedOf := map[graph.ID]graph.ID{}
	normsOf := make(map[graph.ID][]graph.ID, sel.n)
	raws, norms, keys := newBitSet(max), newBitSet(max), newBitSet(max)
	keyOf := map[graph.ID]graph.ID{}
	parsedOf, textOf := map[graph.ID]graph.ID{}, map[graph.ID]graph.ID{}
	firstOf := func(m map[graph.ID]graph.ID, s, o graph.ID) {
		if _, ok := m[s]; !ok {
			m[s] = o
		}
	}
	steps := []struct {
		pred string
		fn   func(s, o graph.ID)
	}{
		{vocab.Cites, func(c, raw graph.ID) {
			if sel.cands.has(c) {
				if _, ok := rawOf[c]; !ok {
					rawOf[c] = raw
					raws.add(raw)
				}
			}
		}},
		{vocab.CitedText, func(c, t graph.ID) {
			if sel.cands.has(c) {
				firstOf(citedOf, c, t)
			}
		}},
		{vocab.NormalizedAs, func(c, n graph.ID) {
			if sel.cands.has(c) {
				normsOf[c] = append(normsOf[c], n)
				norms.add(n)
			}
		}},
		// The key of each normalization: the last, in object order, that
		// has a text (as a map filled by a Match over the predicate
		// keeps it).
		{vocab.ProvWasGeneratedBy, func(k, n graph.ID) {
			if norms.has(n) && sel.text.has(k) {
				keyOf[n] = k
				keys.add(k)
			}
		}},
		{vocab.Parsed, func(k, p graph.ID) {
			if keys.has(k) {
				firstOf(parsedOf, k, p)
			}
		}},
		{vocab.Text, func(n, t graph.ID) {
			if raws.has(n) {
				firstOf(textOf, n, t)
			}
		}},
	}
	for _, s := range steps {
		if err := pairs(s.pred, s.fn); err != nil {
			return nil, err
		}
	}
	// Every term the targets name, decoded in one pass in id order.
	need := make([]graph.ID, 0, 4*sel.n)
	err := sel.cands.each(func(c graph.ID) error {
		need = append(need, c, rawOf[c])
		need = append(need, normsOf[c]...)
		if t, ok := citedOf[c]; ok {
			need = append(need, t)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	for _, m := range []map[graph.ID]graph.ID{parsedOf, textOf} {
		for _, v := range m {
			need = append(need, v)
		}
	}
	slices.Sort(need)
	need = slices.Compact(need)
	if len(need) > 0 && need[0] == 0 {
		need = need[1:]
	}
	terms := make(map[graph.ID]graph.Term, len(need))
	err = r.Terms(ctx, need, func(id graph.ID, t graph.Term) error {
		terms[id] = t
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("resolve: reading the selected citations' terms: %w", err)
	}
	value := func(id graph.ID, ok bool) string {
		if !ok {
			return ""
		}
		return terms[id].Value
	}
	cits := make([]graph.ID, 0, sel.n)
	sel.cands.each(func(c graph.ID) error { cits = append(cits, c); return nil })
	slices.SortFunc(cits, func(a, b graph.ID) int { return strings.Compare(terms[a].Value, terms[b].Value) })
	byURL := map[string]*ResolveTarget{}
	for _, c := range cits {
		rawNode := rawOf[c]
		t, ok := textOf[rawNode]
		raw := value(t, ok)
		// A normalization that accepted the raw URL; any will do, because a
		// policy that applies a parse rule applies the URL Standard's, so
		// every accepting policy parses a raw URL to the same href.
		href := ""
		ns := normsOf[c]
		slices.SortFunc(ns, func(a, b graph.ID) int { return strings.Compare(terms[a].Value, terms[b].Value) })
		for _, n := range ns {
			if sel.errs.has(n) {
				continue
			}
			key, ok := keyOf[n]
			if !ok {
				continue
			}
			p, ok := parsedOf[key]
			if href = value(p, ok); href == "" {
				href = raw // pg:parsed is written only when it differs
			}
			break
		}
		if href == "" {
			counts.Rejected++
			continue
		}
		counts.Selected++
		if opts.OnlyUnresolved && sel.ret.has(c) {
			counts.Retried++
		}
		fetch, _, _ := strings.Cut(href, "#")
		k := raw + "\x00" + fetch
		tg := byURL[k]
		if tg == nil {
			tg = &ResolveTarget{Raw: raw, RawNode: terms[rawNode], URL: fetch}
			byURL[k] = tg
		}
		tg.Citations = append(tg.Citations, terms[c])
		ct, ok := citedOf[c]
		tg.CitedText = append(tg.CitedText, value(ct, ok))
	}
	out := make([]ResolveTarget, 0, len(byURL))
	for _, t := range byURL {
		out = append(out, *t)
	}
	slices.SortFunc(out, func(a, b ResolveTarget) int {
		return strings.Compare(a.URL+"\x00"+a.Raw, b.URL+"\x00"+b.Raw)
	})
	return out, nil
}

// DefaultConcurrency is how many retrievals a resolve run makes at once
// when ResolveOptions.Concurrency is zero.
const DefaultConcurrency = 8

// Retrievals per transaction, and the longest a finished retrieval waits
// before it is written.
const (
	resolveBatch = 64
	resolveFlush = 2 * time.Second
)

// ResolveOptions configures Resolve. Fetch is required.
type ResolveOptions struct {
	// Policy is recorded on the run's node; it should be the one Fetch
	// applies.
	Policy model.FetchPolicy
	// Fetch retrieves one URL. An error means the retrieval did not finish
	// (the context was cancelled) and is not recorded; a failed retrieval
	// is a model.Retrieval with its outcome.
	Fetch func(ctx context.Context, url string) (*model.Retrieval, error)
	// FetchBody, when set, is used instead of Fetch and also returns the
	// final body as read: each retrieval with a body is then extracted
	// (extract.Extract), recorded as a pg:Extraction and its
	// pg:ExtractedEvidence, and each of its citations with cited text gets
	// a pg:PassageCheck.
	FetchBody func(ctx context.Context, url string) (*model.Retrieval, *model.Body, error)
	// Sync, when set, is called before each batch of retrievals is written:
	// it makes the captures the batch refers to durable. If it fails, the
	// batch is not written and the run stops with its error.
	Sync        func() error
	Concurrency int // retrievals at once; 0 means DefaultConcurrency
	// Progress, when set, is called from one goroutine after each
	// retrieval is recorded, with the number done and the total.
	Progress func(done, total int)
	// Now returns the current time; nil means time.Now.
	Now func() time.Time
	// Run is the run's node, when the caller minted it first
	// (NewResolveRun) to name it elsewhere, as in the captures' warcinfo.
	Run graph.Term
}

// NewResolveRun mints the node of a resolve run started at start: from
// its time and a random nonce, as a run is an event, not content.
func NewResolveRun(start time.Time) graph.Term {
	return citestore.Mint("resolve", start.UTC().Format(time.RFC3339Nano), nonce())
}

// ResolveSummary is the outcome of a resolve run.
type ResolveSummary struct {
	Run         graph.Term
	Targets     int            // URLs to retrieve
	Retrievals  int            // retrievals recorded
	Citations   int            // citation links to them written
	Redirected  int            // retrievals with at least one hop
	CrossHost   int            // retrievals with a hop to another host
	Outcomes    map[string]int // retrievals by outcome
	QuadsAdded  int
	Extractions int // extractions recorded
	Passages    int // passage checks recorded
	Found       int // of them, passages found
	Interrupted bool
	Elapsed     time.Duration
}

// ErrInterrupted is returned (wrapped, with the context's error) by
// Resolve when its context was cancelled: the retrievals finished until
// then are recorded and the run is marked interrupted.
var ErrInterrupted = errors.New("resolve run interrupted")

// Resolve retrieves every target with opts.Fetch, opts.Concurrency at a
// time, and records each retrieval, linked from its citations, as a new
// pg:Retrieval in a pg:ResolveRun. Earlier retrievals are kept: a
// retrieval made now is a new activity with its own time.
//
// One goroutine writes: each retrieval's quads go into one transaction
// together, with others that finished about the same time, so the store
// never holds part of a retrieval. When ctx is cancelled, no new retrieval
// starts, the ones under way are abandoned, the finished ones are written,
// and the run is marked interrupted.
func Resolve(ctx context.Context, st *graph.Store, targets []ResolveTarget, opts ResolveOptions) (ResolveSummary, error) {
	now := opts.Now
	if now == nil {
		now = time.Now
	}
	start := now()
	sum := ResolveSummary{Targets: len(targets), Outcomes: map[string]int{}}
	if opts.Fetch == nil && opts.FetchBody == nil {
		return sum, errors.New("resolve: no fetcher")
	}
	workers := opts.Concurrency
	if workers <= 0 {
		workers = DefaultConcurrency
	}
	mapper, err := citestore.NewMapper(normalize.Lenient())
	if err != nil {
		return sum, err
	}
	startText := start.UTC().Format(time.RFC3339Nano)
	run := opts.Run
	if run.Value == "" {
		run = NewResolveRun(start)
	}
	sum.Run = run
	added, err := st.Add(resolveRunStarted(run, startText, opts.Policy))
	sum.QuadsAdded += added
	if err != nil {
		return sum, err
	}

	// Workers fetch; this goroutine writes. fetchCtx also stops the
	// workers when a write fails.
	fetchCtx, stopFetching := context.WithCancel(ctx)
	defer stopFetching()
	type result struct {
		target *ResolveTarget
		rt     *model.Retrieval
		body   *model.Body
	}
	jobs := make(chan *ResolveTarget)
	results := make(chan result)
	var wg sync.WaitGroup
	for range min(workers, max(len(targets), 1)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for t := range jobs {
				var rt *model.Retrieval
				var body *model.Body
				var err error
				if opts.FetchBody != nil {
					rt, body, err = opts.FetchBody(fetchCtx, t.URL)
				} else {
					rt, err = opts.Fetch(fetchCtx, t.URL)
				}
				if err != nil || rt == nil {
					continue // unfinished: not recorded
				}
				results <- result{t, rt, body}
			}
		}()
	}
	go func() {
		defer close(jobs)
		for i := range targets {
			select {
			case jobs <- &targets[i]:
			case <-fetchCtx.Done():
				return
			}
		}
	}()
	go func() {
		wg.Wait()
		close(results)
	}()

	var buf []graph.Quad
	var rets []graph.Term // the retrievals of buf, whose citations' view rows change
	pending := 0
	var writeErr error
	flush := func() {
		if pending == 0 || writeErr != nil {
			return
		}
		if opts.Sync != nil {
			if err := opts.Sync(); err != nil {
				writeErr = fmt.Errorf("resolve: making the captures of %d retrievals durable: %w", pending, err)
				stopFetching()
				return
			}
		}
		added, err := addEvidence(ctx, st, buf, rets)
		sum.QuadsAdded += added
		if err != nil {
			writeErr = fmt.Errorf("resolve: writing %d retrievals: %w", pending, err)
			stopFetching()
			return
		}
		buf, rets, pending = buf[:0], rets[:0], 0
	}
	tick := time.NewTicker(resolveFlush)
	defer tick.Stop()
	done := 0
loop:
	for {
		select {
		case r, ok := <-results:
			if !ok {
				break loop
			}
			if writeErr != nil {
				continue // drain
			}
			var ret graph.Term
			buf, ret = mapper.RetrievalQuads(buf, r.target.Citations, r.target.RawNode, r.target.Raw, r.rt, run)
			rets = append(rets, ret)
			if r.body != nil {
				buf = recordEvidence(mapper, buf, &sum, ret, r.target, r.rt, r.body)
			}
			pending++
			sum.Retrievals++
			sum.Citations += len(r.target.Citations)
			sum.Outcomes[r.rt.Outcome]++
			if len(r.rt.Hops) > 0 {
				sum.Redirected++
			}
			for _, h := range r.rt.Hops {
				if !mapper.SameHost(h.From, h.To) {
					sum.CrossHost++
					break
				}
			}
			if pending >= resolveBatch {
				flush()
			}
			done++
			if opts.Progress != nil {
				opts.Progress(done, len(targets))
			}
		case <-tick.C:
			flush()
		}
	}
	flush()
	if writeErr != nil {
		return sum, writeErr
	}
	end := now()
	sum.Elapsed = end.Sub(start)
	status := "complete"
	if ctx.Err() != nil {
		status, sum.Interrupted = "interrupted", true
	}
	added, err = st.Add(resolveRunEnded(run, end, status, sum.Retrievals))
	sum.QuadsAdded += added
	if err != nil {
		return sum, err
	}
	if sum.Interrupted {
		return sum, fmt.Errorf("%w after %d of %d retrievals: %w", ErrInterrupted, sum.Retrievals, len(targets), context.Cause(ctx))
	}
	return sum, nil
}

// resolveRunStarted returns the quads that record the start of a resolve
// run, with the policy its retrievals follow.
func resolveRunStarted(run graph.Term, start string, p model.FetchPolicy) []graph.Quad {
	ports := "*"
	if !p.AllowPrivate {
		s := make([]string, len(p.Ports))
		for i, n := range p.Ports {
			s[i] = strconv.Itoa(n)
		}
		ports = strings.Join(s, " ")
	}
	q := func(pred string, o graph.Term) graph.Quad { return graph.Quad{S: run, P: graph.IRI(pred), O: o} }
	integer := func(n int64) graph.Term { return graph.Literal(strconv.FormatInt(n, 10), graph.XSDInteger) }
	return []graph.Quad{
		{S: citestore.AgentIRI, P: graph.IRI(vocab.RDFType), O: graph.IRI(vocab.ProvSoftwareAgent)},
		{S: citestore.AgentIRI, P: graph.IRI(vocab.RDFType), O: graph.IRI(vocab.ProvAgent)},
		{S: citestore.AgentIRI, P: graph.IRI(vocab.RDFSLabel), O: graph.String("provgraph")},
		q(vocab.RDFType, graph.IRI(vocab.ResolveRun)),
		q(vocab.RDFType, graph.IRI(vocab.ProvActivity)),
		q(vocab.ProvStartedAtTime, graph.Literal(start, graph.XSDDateTime)),
		q(vocab.RunStatus, graph.String("running")),
		q(vocab.ProvWasAssociatedWith, citestore.AgentIRI),
		q(vocab.MaxRedirects, integer(int64(p.MaxRedirects))),
		q(vocab.MaxBodyBytes, integer(p.MaxBodyBytes)),
		q(vocab.TimeoutMillis, integer(p.Timeout.Milliseconds())),
		q(vocab.UserAgent, graph.String(p.UserAgent)),
		q(vocab.AllowedSchemes, graph.String(strings.Join(p.Schemes, " "))),
		q(vocab.AllowedPorts, graph.String(ports)),
		q(vocab.AllowPrivate, graph.Literal(strconv.FormatBool(p.AllowPrivate), graph.XSDBoolean)),
	}
}

// resolveRunEnded returns the quads that record how a resolve run ended:
// status "complete" or "interrupted".
func resolveRunEnded(run graph.Term, end time.Time, status string, retrievals int) []graph.Quad {
	return []graph.Quad{
		{S: run, P: graph.IRI(vocab.RunStatus), O: graph.String(status)},
		{S: run, P: graph.IRI(vocab.ProvEndedAtTime), O: graph.Literal(end.UTC().Format(time.RFC3339Nano), graph.XSDDateTime)},
		{S: run, P: graph.IRI(vocab.Records), O: graph.Literal(strconv.Itoa(retrievals), graph.XSDInteger)},
	}
}

// recordEvidence appends the extraction of a retrieval's body and the
// passage checks of its citations.
func recordEvidence(mapper *citestore.Mapper, buf []graph.Quad, sum *ResolveSummary, ret graph.Term, t *ResolveTarget, rt *model.Retrieval, body *model.Body) []graph.Quad {
	ex := ExtractBody(rt, body, rt.SnapshotRef)
	buf, ev := mapper.ExtractionQuads(buf, ret, ex)
	sum.Extractions++
	for i, c := range t.Citations {
		if i < len(t.CitedText) && t.CitedText[i] != "" {
			p := CheckPassage(t.CitedText[i], ex)
			buf = mapper.PassageQuads(buf, c, ev, p)
			sum.Passages++
			if p.Found {
				sum.Found++
			}
		}
	}
	return buf
}

// addEvidence adds quads of new retrievals or evidence for the retrieval
// nodes rets, and in the same transaction rewrites the grouping view rows
// of every citation retrieved in them: their evidence changed.
//
// The rows are written whatever ctx says: resolve writes the retrievals
// it has once it is interrupted, and their rows must go with them.
func addEvidence(ctx context.Context, st *graph.Store, quads []graph.Quad, rets []graph.Term) (int, error) {
	ctx = context.WithoutCancel(ctx)
	return st.AddWith(quads, func(w *graph.Writer) error {
		if len(w.Views()) == 0 {
			return nil
		}
		var cits []graph.Term
		for _, r := range rets {
			cs, err := citestore.RetrievalCitations(ctx, w, r)
			if err != nil {
				return err
			}
			cits = append(cits, cs...)
		}
		slices.SortFunc(cits, func(a, b graph.Term) int { return strings.Compare(a.Value, b.Value) })
		cits = slices.CompactFunc(cits, func(a, b graph.Term) bool { return a.Value == b.Value })
		return citestore.WriteViewRows(ctx, w, cits)
	})
}
