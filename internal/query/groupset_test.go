package query_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/provgraph/provgraph/internal/graph"
	"github.com/provgraph/provgraph/internal/ingest"
	"github.com/provgraph/provgraph/internal/model"
	"github.com/provgraph/provgraph/internal/normalize"
	"github.com/provgraph/provgraph/internal/query"
	"github.com/provgraph/provgraph/internal/synth"
)

// synthStore ingests n synthetic citations over few sites (so that many
// citations share keys, redirects and canonicals) into a fresh store.
func synthStore(t *testing.T, n int) *graph.Store {
	t.Helper()
	var in bytes.Buffer
	if err := synth.New(synth.Options{Seed: 7, Sites: 40}).Write(&in, n); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	st, err := graph.Open(filepath.Join(dir, "s.db"), &graph.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	path := filepath.Join(dir, "synth.jsonl")
	if err := os.WriteFile(path, in.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ingest.File(context.Background(), st, path, "synth.jsonl", ingest.Options{Policy: normalize.Default()}); err != nil {
		t.Fatal(err)
	}
	return st
}

func reportJSON(t *testing.T, rep *query.Report) string {
	t.Helper()
	b, err := json.MarshalIndent(rep, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestLoadGroupsMatchesGroups: the groups found from a database's ids
// (LoadGroups, which builds members only while writing them) are exactly
// the groups of the loaded snapshot, under every option, and writing them
// in batches gives the listed groups in order.
func TestLoadGroupsMatchesGroups(t *testing.T) {
	ctx := context.Background()
	stores := map[string]*graph.Store{
		"corpus":          corpusStore(t, "default"),
		"corpus, 2 rules": corpusStore(t, "default", "testdata/hostrules.toml"),
		"synthetic":       synthStore(t, 3000),
	}
	options := []query.GroupOptions{
		{},
		{MinSize: 2},
		{MinSize: 3, Verdict: model.VerdictNeedsContentCheck},
		{Verdict: model.VerdictConflict},
		{MaxShared: 1},
		{MinSize: 1000},
		{MinSize: 2, Review: true},
		{MinSize: 3, Verdict: model.VerdictNormalizedCompare, Review: true},
	}
	for name, st := range stores {
		snap, err := query.Load(ctx, st, "")
		if err != nil {
			t.Fatal(err)
		}
		for _, opts := range options {
			want := query.Groups(snap, opts)
			set, err := query.LoadGroups(ctx, st, "", opts)
			if err != nil {
				t.Fatal(err)
			}
			got, err := set.Report(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if g, w := reportJSON(t, got), reportJSON(t, want); g != w {
				t.Errorf("%s %+v: LoadGroups differs from Groups(Load):\n%.3000s\nwant\n%.3000s", name, opts, g, w)
				continue
			}
			if opts == (query.GroupOptions{}) && len(want.Groups) < 3 {
				t.Fatalf("%s: only %d groups", name, len(want.Groups))
			}
			var streamed, whole bytes.Buffer
			for _, g := range want.Groups {
				b, _ := json.Marshal(g)
				whole.Write(append(b, '\n'))
			}
			rest, err := set.Write(ctx, func(buf []byte, g *query.Group) []byte {
				b, _ := json.Marshal(g)
				return append(append(buf, b...), '\n')
			}, func(p []byte) error {
				streamed.Write(p)
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if streamed.String() != whole.String() {
				t.Errorf("%s %+v: written groups differ from the report's", name, opts)
			}
			if len(rest.Groups) != 0 || reportJSON(t, &query.Report{Counts: rest.Counts, Rejected: rest.Rejected, Missing: rest.Missing}) != reportJSON(t, &query.Report{Counts: want.Counts, Rejected: want.Rejected, Missing: want.Missing}) {
				t.Errorf("%s %+v: Write's report differs from the report without its groups", name, opts)
			}
		}
	}
}

// TestWriteInTasks writes the groups as tasks of one group each (many more
// tasks than the workers may have taken and not yet written): they come
// out in order; a write that fails, or a context cancelled, stops Write
// with that error.
func TestWriteInTasks(t *testing.T) {
	defer query.SetGroupsPerTask(1)()
	ctx := context.Background()
	st := synthStore(t, 3000)
	snap, err := query.Load(ctx, st, "")
	if err != nil {
		t.Fatal(err)
	}
	want := query.Groups(snap, query.GroupOptions{MinSize: 1})
	if len(want.Groups) < 100 {
		t.Fatalf("only %d groups", len(want.Groups))
	}
	set, err := query.LoadGroups(ctx, st, "", query.GroupOptions{MinSize: 1})
	if err != nil {
		t.Fatal(err)
	}
	encode := func(buf []byte, g *query.Group) []byte { return append(append(buf, g.ID...), '\n') }
	var whole bytes.Buffer
	for _, g := range want.Groups {
		whole.WriteString(g.ID + "\n")
	}
	var got bytes.Buffer
	writes := 0
	if _, err := set.Write(ctx, encode, func(p []byte) error {
		writes++
		got.Write(p)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if got.String() != whole.String() || writes != len(want.Groups) {
		t.Errorf("%d writes of %d bytes; want %d writes, the groups in order (%d bytes)", writes, got.Len(), len(want.Groups), whole.Len())
	}

	boom := errors.New("disk full")
	writes = 0
	_, err = set.Write(ctx, encode, func([]byte) error {
		if writes++; writes == 5 {
			return boom
		}
		return nil
	})
	if !errors.Is(err, boom) || writes != 5 {
		t.Errorf("failing write: Write = %v after %d writes, want %v after 5", err, writes, boom)
	}

	cctx, cancel := context.WithCancel(ctx)
	writes = 0
	_, err = set.Write(cctx, encode, func([]byte) error {
		if writes++; writes == 3 {
			cancel()
		}
		return nil
	})
	if !errors.Is(err, context.Canceled) || writes != 3 {
		t.Errorf("cancelled: Write = %v after %d writes, want %v after 3", err, writes, context.Canceled)
	}
}
