package service_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/provgraph/provgraph/internal/graph"
	"github.com/provgraph/provgraph/internal/ingest"
	"github.com/provgraph/provgraph/internal/normalize"
	"github.com/provgraph/provgraph/internal/query"
	"github.com/provgraph/provgraph/internal/service"
)

var classifyTests = []struct {
	err  error
	want service.Kind
}{
	{nil, service.OK},
	{io.ErrUnexpectedEOF, service.Internal},
	{service.Usagef("--format %q: want table", "x"), service.Usage},
	{fmt.Errorf("load: %w", service.UsageError{Err: query.ErrNoPolicy}), service.Usage},
	{service.InputError{Err: errors.New("a.jsonl:3: bad line")}, service.Rejected},
	{service.ErrRejected, service.Rejected},
	{fmt.Errorf("open a.db: %w", graph.ErrLocked), service.Locked},
	{fmt.Errorf("read a.db: %w", graph.ErrCorrupt), service.Damaged},
	{service.InterruptError{Err: context.Canceled}, service.Interrupted},
	// What is marked more precisely wins: a usage error about a locked
	// file is a locked file, an interrupt is an interrupt whatever it
	// wraps.
	{service.UsageError{Err: graph.ErrLocked}, service.Locked},
	{service.InterruptError{Err: graph.ErrCorrupt}, service.Interrupted},
	{service.InputError{Err: graph.ErrLocked}, service.Rejected},
}

func TestClassify(t *testing.T) {
	for _, tt := range classifyTests {
		if got := service.Classify(tt.err); got != tt.want {
			t.Errorf("Classify(%v) = %v, want %v", tt.err, got, tt.want)
		}
	}
}

func TestKindHTTPStatus(t *testing.T) {
	for k, want := range map[service.Kind]int{service.OK: 200, service.Usage: 400, service.Rejected: 422, service.Internal: 500,
		service.Damaged: 500, service.Locked: 503, service.Interrupted: 499} {
		if got := k.HTTPStatus(); got != want {
			t.Errorf("%v.HTTPStatus() = %d, want %d", k, got, want)
		}
	}
}

func TestQueryError(t *testing.T) {
	for _, tt := range []struct {
		err  error
		want service.Kind
	}{
		{fmt.Errorf("graph: read q.db: %w", io.ErrUnexpectedEOF), service.Internal},
		{fmt.Errorf("graph: read q.db: %w", graph.ErrCorrupt), service.Damaged},
		{fmt.Errorf("%w: %q", query.ErrNoPolicy, "nope@1"), service.Usage},
	} {
		if got := service.Classify(service.QueryError(tt.err)); got != tt.want {
			t.Errorf("Classify(QueryError(%v)) = %v, want %v", tt.err, got, tt.want)
		}
	}
}

func TestIsInterrupt(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	if service.IsInterrupt(ctx, context.Canceled) {
		t.Error("IsInterrupt before the cancel")
	}
	cancel()
	if !service.IsInterrupt(ctx, fmt.Errorf("read: %w", context.Canceled)) {
		t.Error("IsInterrupt(cancelled ctx, wrapped Canceled) = false")
	}
	if service.IsInterrupt(ctx, io.ErrUnexpectedEOF) {
		t.Error("IsInterrupt(cancelled ctx, another error) = true")
	}
}

// corpusDB ingests internal/query/testdata/corpus.jsonl into a new
// database and returns its path.
func corpusDB(t *testing.T) string {
	t.Helper()
	db := filepath.Join(t.TempDir(), "corpus.db")
	pol, err := normalize.LoadPolicy("default")
	if err != nil {
		t.Fatal(err)
	}
	st, err := graph.Open(db, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ingest.File(context.Background(), st, "../query/testdata/corpus.jsonl", "corpus.jsonl", ingest.Options{Policy: pol}); err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	return db
}

func TestDBRequests(t *testing.T) {
	ctx := context.Background()
	d := service.DB{Path: corpusDB(t)}
	set, err := d.Groups(ctx, "", query.GroupOptions{MaxShared: 10, MinSize: 2})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := set.Report(ctx)
	if err != nil || len(rep.Groups) == 0 {
		t.Fatalf("Groups: %d groups, %v", len(rep.Groups), err)
	}
	if _, err := d.Load(ctx, "nope@1"); service.Classify(err) != service.Usage {
		t.Errorf("Load(no such policy) = %v, kind %v, want usage", err, service.Classify(err))
	}
	if _, err := d.Groups(ctx, "nope@1", query.GroupOptions{}); service.Classify(err) != service.Usage {
		t.Errorf("Groups(no such policy) = %v, kind %v, want usage", err, service.Classify(err))
	}
	ls, err := d.Lineage(ctx, service.LineageRequest{ID: "moved-old", LineageOptions: query.LineageOptions{Scope: query.ScopeNeighbourhood}})
	if err != nil || len(ls) != 1 || ls[0].CitationID != "moved-old" {
		t.Fatalf("Lineage(moved-old) = %v, %v", ls, err)
	}
	_, err = d.Lineage(ctx, service.LineageRequest{ID: "no-such"})
	if service.Classify(err) != service.Rejected || !errors.Is(err, query.ErrNoCitation) || !strings.Contains(err.Error(), d.Path) {
		t.Errorf("Lineage(no-such) = %v, kind %v; want rejected, naming %s", err, service.Classify(err), d.Path)
	}
	_, err = d.Lineage(ctx, service.LineageRequest{URL: "https://nowhere.example/", ByURL: true})
	if service.Classify(err) != service.Rejected {
		t.Errorf("Lineage(--url nowhere) = %v, kind %v; want rejected", err, service.Classify(err))
	}
}

// TestDBOpenLocked: a database held for writing by another store is
// Locked at once when LockTimeout is zero (zero means do not wait, unlike
// graph.Options).
func TestDBOpenLocked(t *testing.T) {
	d := service.DB{Path: corpusDB(t)}
	held, err := d.Open(false)
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	_, err = d.Load(context.Background(), "")
	if service.Classify(err) != service.Locked {
		t.Errorf("Load of a held database = %v, kind %v, want locked", err, service.Classify(err))
	}
}

func TestDBOpenMissing(t *testing.T) {
	d := service.DB{Path: filepath.Join(t.TempDir(), "missing.db")}
	_, err := d.Load(context.Background(), "")
	if service.Classify(err) != service.Internal || !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Load of a missing file = %v, kind %v, want internal (not exist)", err, service.Classify(err))
	}
	if _, statErr := os.Stat(d.Path); !errors.Is(statErr, os.ErrNotExist) {
		t.Errorf("a read-only open created %s", d.Path)
	}
}

func TestDBStatsAndPolicyDiff(t *testing.T) {
	ctx := context.Background()
	d := service.DB{Path: corpusDB(t)}
	res, err := d.Stats(ctx, service.StatsRequest{MaxShared: 10})
	if err != nil || res.Stats == nil || res.Stats.Citations != 31 || res.Lines != nil {
		t.Fatalf("Stats = %+v, %v; want the counts of 31 citations", res, err)
	}
	res, err = d.Stats(ctx, service.StatsRequest{MaxShared: 10, Explain: "keys"})
	if err != nil || res.Stats != nil || res.Lines == nil || res.Lines.Len() == 0 {
		t.Fatalf("Stats(--explain keys) = %+v, %v; want the keys", res, err)
	}
	res.Lines.Close()
	if _, err := d.Stats(ctx, service.StatsRequest{Explain: "bogus"}); service.Classify(err) != service.Usage {
		t.Errorf("Stats(--explain bogus) = %v, kind %v, want usage", err, service.Classify(err))
	}
	for _, how := range []service.GroupsRead{service.GroupsScan, {View: true, Strict: true}} {
		diff, err := d.PolicyDiff(ctx, "provgraph-default", "provgraph-default", query.GroupOptions{MaxShared: 10}, how, query.DiskSort{Dir: t.TempDir()})
		if err != nil || len(diff.Changes) != 0 || diff.Counts["groups_a"] == 0 || diff.Counts["groups_a"] != diff.Counts["groups_b"] {
			t.Errorf("PolicyDiff(a, a) read %+v = %+v, %v; want no change and the groups counted alike", how, diff, err)
		}
		if _, err := d.PolicyDiff(ctx, "provgraph-default", "nope@1", query.GroupOptions{}, how, query.DiskSort{}); service.Classify(err) != service.Usage {
			t.Errorf("PolicyDiff(a, no such policy) read %+v = %v, kind %v, want usage", how, err, service.Classify(err))
		}
	}
}

func TestLoadPolicy(t *testing.T) {
	if p, err := service.LoadPolicy("Lenient"); err != nil || p.Name() != "provgraph-lenient" {
		t.Errorf("LoadPolicy(Lenient) = %v, %v", p, err)
	}
	bad := filepath.Join(t.TempDir(), "bad.toml")
	if err := os.WriteFile(bad, []byte("name = 3\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"no-such-policy", bad} {
		if _, err := service.LoadPolicy(name); service.Classify(err) != service.Usage {
			t.Errorf("LoadPolicy(%q) = %v, kind %v, want usage", name, err, service.Classify(err))
		}
	}
}

// TestIngestThenBackend: DB.Ingest creates the database once the input is
// valid, OpenStore answers through store's interfaces what was ingested,
// and a conflicting citation id is Rejected with nothing written.
func TestIngestThenBackend(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	db := service.DB{Path: filepath.Join(dir, "new.db")}
	in := filepath.Join(dir, "a.jsonl")
	if err := os.WriteFile(in, []byte(`{"citation_id":"c1","raw_url":"https://a.test/x","observed_at":"2025-01-01T00:00:00Z"}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	req := service.IngestRequest{Path: in, Name: "a.jsonl", Format: "jsonl", Options: ingest.Options{Policy: normalize.Default()}}
	if sum, err := db.Ingest(ctx, req); err != nil || sum.Records != 1 {
		t.Fatalf("Ingest = %+v, %v, want 1 record", sum, err)
	}
	st, err := db.OpenStore(true)
	if err != nil {
		t.Fatal(err)
	}
	ids, err := st.ByRaw(ctx, "https://a.test/x")
	if err != nil || len(ids) != 1 || ids[0] != "c1" {
		t.Errorf("ByRaw = %v, %v, want [c1]", ids, err)
	}
	if err := st.Check(ctx); err != nil {
		t.Errorf("Check = %v", err)
	}
	n, err := st.Quads.Count()
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}

	if err := os.WriteFile(in, []byte(`{"citation_id":"c1","raw_url":"https://a.test/y","observed_at":"2025-01-01T00:00:00Z"}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = db.Ingest(ctx, req)
	var ce *ingest.ConflictError
	if !errors.As(err, &ce) || service.Classify(err) != service.Rejected {
		t.Fatalf("Ingest of a conflicting id = %v (%v), want a rejected *ingest.ConflictError", err, service.Classify(err))
	}
	g, err := db.Open(true)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	if m, err := g.Count(); err != nil || m != n {
		t.Errorf("after the conflict, Count = %d, %v, want %d", m, err, n)
	}
}

// TestGroupsFrom: GroupsFrom reads the view when asked and the view keeps
// member records or holds more citations than ScanLimit, scans
// otherwise, gives the same report either way, and keeps the database
// open until done (the set read from the view reads it while it is
// written).
func TestGroupsFrom(t *testing.T) {
	testGroupsFrom(t, corpusDB(t), []groupsFromCase{
		{service.GroupsScan, false},
		{service.GroupsRead{View: true}, true},
		{service.GroupsRead{View: true, Batch: 1}, true},
		{service.GroupsRead{View: true, ScanLimit: 30}, true}, // 31 citations
		// not more than the limit, but the rows carry member records
		{service.GroupsRead{View: true, ScanLimit: 31}, true},
		{service.GroupsRead{View: true, ScanLimit: 1 << 40}, true},
	}, true)
	// A file of format 6: its view's rows have no member records.
	v6 := filepath.Join(t.TempDir(), "v6.db")
	b, err := os.ReadFile("../graph/testdata/format-v6/prov.db")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(v6, b, 0o600); err != nil {
		t.Fatal(err)
	}
	testGroupsFrom(t, v6, []groupsFromCase{
		{service.GroupsScan, false},
		{service.GroupsRead{View: true}, true},
		{service.GroupsRead{View: true, ScanLimit: 14}, true},  // 15 citations
		{service.GroupsRead{View: true, ScanLimit: 15}, false}, // not more than the limit
	}, false)
}

type groupsFromCase struct {
	how  service.GroupsRead
	view bool
}

func testGroupsFrom(t *testing.T, db string, cases []groupsFromCase, records bool) {
	t.Helper()
	ctx := context.Background()
	d := service.DB{Path: db}
	opts := query.GroupOptions{MinSize: 2, Review: true}
	var want string
	for _, tc := range cases {
		set, done, err := d.GroupsFrom(ctx, "", opts, tc.how)
		if err != nil {
			t.Fatal(err)
		}
		if set.FromView() != tc.view || set.FromRecords() != (tc.view && records) {
			t.Errorf("%s: GroupsFrom(%+v): from the view %v, from member records %v; want %v, %v", filepath.Base(db), tc.how, set.FromView(), set.FromRecords(), tc.view, tc.view && records)
		}
		rep, err := set.Report(ctx)
		done()
		if err != nil {
			t.Fatal(err)
		}
		b, err := json.Marshal(rep)
		if err != nil {
			t.Fatal(err)
		}
		if want == "" {
			want = string(b)
		} else if string(b) != want {
			t.Errorf("%s: GroupsFrom(%+v): the report differs from the scan's", filepath.Base(db), tc.how)
		}
	}
	if _, _, err := d.GroupsFrom(ctx, "nope@1", opts, service.GroupsRead{View: true}); service.Classify(err) != service.Usage {
		t.Errorf("GroupsFrom(no such policy) = %v, kind %v, want usage", err, service.Classify(err))
	}
}

// TestStatsExplainRejected: stats --explain rejected, read from a scan or
// from the grouping view without holding every citation, lists what
// Explain lists on a snapshot of every citation, in the same order.
func TestStatsExplainRejected(t *testing.T) {
	ctx := context.Background()
	d := service.DB{Path: corpusDB(t)}
	snap, err := d.Load(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	want, err := query.Explain(snap, query.Groups(snap, query.GroupOptions{}), "rejected")
	if err != nil || len(want) == 0 {
		t.Fatalf("Explain(rejected) on a snapshot: %d lines, %v; the corpus has rejected URLs", len(want), err)
	}
	wantJSON, _ := json.Marshal(want)
	for _, how := range []service.GroupsRead{service.GroupsScan, {View: true, Strict: true, Batch: 2}} {
		res, err := d.Stats(ctx, service.StatsRequest{Explain: "rejected", Read: how})
		if err != nil {
			t.Fatal(err)
		}
		lines := []query.ExplainLine{}
		if err := res.Lines.Each(func(l query.ExplainLine) error { lines = append(lines, l); return nil }); err != nil {
			t.Fatal(err)
		}
		res.Lines.Close()
		if got, _ := json.Marshal(lines); string(got) != string(wantJSON) {
			t.Errorf("read %+v: %s\nwant %s", how, got, wantJSON)
		}
	}
}
