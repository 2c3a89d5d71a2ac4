package ingest_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/provgraph/provgraph/internal/graph/citestore"
	"github.com/provgraph/provgraph/internal/ingest"
	"github.com/provgraph/provgraph/internal/normalize"
	"github.com/provgraph/provgraph/internal/query"
	"github.com/provgraph/provgraph/internal/synth"
)

// TestRenormalizeEqualsIngest: citations renormalized under a policy, read
// back from the spool a few at a time and written in small batches, group
// exactly as the same citations ingested under that policy do (the same
// groups, members, keys and reasons, the same rejected URLs); base URLs
// (testdata/citations.jsonl has some) are applied; nothing is left in the
// temporary directory.
func TestRenormalizeEqualsIngest(t *testing.T) {
	ctx := context.Background()
	var in bytes.Buffer
	fixture, err := os.ReadFile("../../testdata/citations.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	in.Write(fixture)
	if err := synth.New(synth.Options{Seed: 11, Sites: 30}).Write(&in, 700); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "in.jsonl")
	if err := os.WriteFile(path, in.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	lenient := normalize.Lenient()

	renorm := openStore(t)
	if _, err := ingestFile(t, renorm, path, false); err != nil {
		t.Fatal(err)
	}
	defer ingest.SetRenormChunk(7)()
	tmp := t.TempDir()
	sum, err := ingest.Renormalize(ctx, renorm, ingest.Options{Policy: lenient, BatchQuads: 300, Now: clock(), TempDir: tmp})
	if err != nil {
		t.Fatal(err)
	}
	if ents, _ := os.ReadDir(tmp); len(ents) != 0 {
		t.Errorf("%d files left in the temporary directory", len(ents))
	}

	direct := openStore(t)
	if _, err := ingest.File(ctx, direct, path, "in.jsonl", ingest.Options{Policy: lenient, Now: clock(), BatchQuads: 300}); err != nil {
		t.Fatal(err)
	}
	if sum.Records != 700+bytes.Count(fixture, []byte("\n")) {
		t.Errorf("renormalized %d citations, want %d", sum.Records, 700+bytes.Count(fixture, []byte("\n")))
	}
	got, want := groupsJSON(t, citestore.New(renorm), lenient.Digest()), groupsJSON(t, citestore.New(direct), lenient.Digest())
	if got != want {
		t.Errorf("renormalized groups differ from those of an ingest under the policy:\n%.2000s\nwant\n%.2000s", got, want)
	}
	if !bytes.Contains(fixture, []byte(`"base_url"`)) {
		t.Fatal("the fixture has no base URL: the test needs one")
	}
}

func groupsJSON(t *testing.T, cs *citestore.Store, digest string) string {
	t.Helper()
	set, err := query.LoadGroups(context.Background(), cs, digest, query.GroupOptions{MinSize: 1})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := set.Report(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.MarshalIndent(struct {
		Groups, Rejected any
	}{rep.Groups, rep.Rejected}, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
