package ingest_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/provgraph/provgraph/internal/ingest"
	"github.com/provgraph/provgraph/internal/normalize"
)

// idLine is one JSON Lines record with citation id c<id>; variant changes
// its content (and so its digest) and nothing else.
func idLine(id, variant int) string {
	return fmt.Sprintf(`{"citation_id":"c%d","raw_url":"https://a.test/%d","observed_at":"2025-01-01T00:00:%02dZ"}`, id, id, variant)
}

// TestIngestIDCheckSpills runs the validation pass with its working set
// turned down, so that the citation ids are sorted in runs on disk and
// merged (at 16 KiB in merges of merges), and compares every outcome with
// the same input checked in memory: the same error, naming the same lines,
// or the same records and quads. Each input has 5,000 lines, ids c1 to
// c5000 in order, changed as the case says.
func TestIngestIDCheckSpills(t *testing.T) {
	const n = 5000
	type change struct {
		line    int // 1-based
		text    string
		badJSON bool
	}
	dup := func(line, ofLine, variant int) change { return change{line: line, text: idLine(ofLine, variant)} }
	bad := func(line int) change { return change{line: line, badJSON: true} }
	tests := []struct {
		name    string
		changes []change
		stored  []string // lines ingested first
		skip    bool
		want    string // the error, or "" for success
		records int
	}{
		{name: "repeats with the same content, within a run and across runs", changes: []change{dup(10, 3, 0), dup(4000, 2, 0), dup(n, 1, 0)}, records: n - 3},
		{name: "conflict within a run", changes: []change{dup(20, 5, 1)}, want: `in.jsonl:20: citation_id "c5" already exists in line 5 with different content`},
		{name: "conflict across runs", changes: []change{dup(4990, 7, 1)}, want: `in.jsonl:4990: citation_id "c7" already exists in line 7 with different content`},
		{name: "conflict between the first and the last line", changes: []change{dup(n, 1, 1)}, want: `in.jsonl:5000: citation_id "c1" already exists in line 1 with different content`},
		{name: "repeat, then conflict with the first occurrence", changes: []change{dup(2000, 1, 0), dup(4500, 1, 2)}, want: `in.jsonl:4500: citation_id "c1" already exists in line 1 with different content`},
		{name: "the earlier line wins, not the smaller id", changes: []change{dup(3000, 2900, 1), dup(4000, 1, 1)}, want: `in.jsonl:3000: citation_id "c2900" already exists in line 2900 with different content`},
		{name: "a conflict before a bad line", changes: []change{dup(4000, 10, 1), bad(4500)}, want: `in.jsonl:4000: citation_id "c10" already exists in line 10 with different content`},
		{name: "a bad line before a conflict", changes: []change{bad(100), dup(4000, 10, 1)}, want: `in.jsonl:100: `},
		{name: "skipped bad lines, then a conflict", changes: []change{bad(100), dup(4000, 10, 1)}, skip: true, want: `in.jsonl:4000: citation_id "c10" already exists in line 10 with different content`},
		{name: "skipped bad lines, repeats", changes: []change{bad(100), bad(n), dup(4000, 10, 0)}, skip: true, want: "2 of 4999 lines rejected", records: n - 3},
		{name: "conflict with the database at the first line", stored: []string{idLine(1, 1)}, want: `in.jsonl:1: citation_id "c1" already exists in the database with different content`},
		{name: "conflict with the database at the last line", stored: []string{idLine(n, 1)}, want: `in.jsonl:5000: citation_id "c5000" already exists in the database with different content`},
		{name: "a conflict in the input before one with the database", stored: []string{idLine(4500, 1)}, changes: []change{dup(4000, 10, 1)}, want: `in.jsonl:4000: citation_id "c10" already exists in line 10`},
		{name: "a conflict with the database before one in the input", stored: []string{idLine(3000, 1)}, changes: []change{dup(4000, 10, 1)}, want: `in.jsonl:3000: citation_id "c3000" already exists in the database`},
		{name: "a repeat whose content the database holds conflicts with its first line", stored: []string{idLine(10, 1)}, changes: []change{dup(4000, 10, 1)}, want: `in.jsonl:10: citation_id "c10" already exists in the database`},
		{name: "a repeat with other content than the database and its first line", stored: []string{idLine(10, 0)}, changes: []change{dup(4000, 10, 1)}, want: `in.jsonl:4000: citation_id "c10" already exists in line 10`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lines := make([]string, n)
			for i := range lines {
				lines[i] = idLine(i+1, 0)
			}
			for _, c := range tt.changes {
				if c.badJSON {
					lines[c.line-1] = `{"citation_id":`
				} else {
					lines[c.line-1] = c.text
				}
			}
			in := writeFile(t, "in.jsonl", strings.Join(lines, "\n")+"\n")
			var outcomes []string
			for _, mem := range []int64{0, 64 << 10, ingest.MinWorkMem} {
				st := openStore(t)
				if len(tt.stored) > 0 {
					if _, err := ingestFile(t, st, writeFile(t, "stored.jsonl", strings.Join(tt.stored, "\n")+"\n"), false); err != nil {
						t.Fatal(err)
					}
				}
				before := count(t, st)
				tmp := t.TempDir()
				opts := ingest.Options{Policy: normalize.Default(), SkipInvalid: tt.skip, Now: clock(), WorkMem: mem, TempDir: tmp}
				spills := 0
				ingest.SetHook(&opts, func(event string) {
					if event == "ids-spilled" {
						spills++
					}
				})
				sum, err := ingest.File(context.Background(), st, in, "in.jsonl", opts)
				got := "ok"
				if err != nil {
					got = err.Error()
				}
				if tt.want == "" && err != nil || tt.want != "" && (err == nil || !strings.Contains(got, tt.want)) {
					t.Errorf("work mem %d: ingest = %v, want %q", mem, err, tt.want)
				}
				if tt.records != 0 && sum.Records != tt.records {
					t.Errorf("work mem %d: %d records, want %d", mem, sum.Records, tt.records)
				}
				var ce *ingest.ConflictError
				if errors.As(err, &ce) && count(t, st) != before {
					t.Errorf("work mem %d: a run that stopped on a conflict wrote quads", mem)
				}
				// The pass reads up to the line the error names, or all.
				read := n
				fmt.Sscanf(got, "in.jsonl:%d:", &read)
				if mem == 0 && spills != 0 {
					t.Errorf("work mem %d: the check wrote %d runs to disk, want none", mem, spills)
				} else if want := (read - 1) * 40 / int(max(mem, 1)); mem != 0 && spills < want {
					t.Errorf("work mem %d: the check wrote %d runs to disk reading %d lines, want %d", mem, spills, read, want)
				}
				if ents, _ := os.ReadDir(tmp); len(ents) != 0 {
					t.Errorf("work mem %d: %d files left in the temporary directory", mem, len(ents))
				}
				outcome := fmt.Sprintf("%s; %d records; %d invalid; %d quads", got, sum.Records, len(sum.Invalid), sum.QuadsAdded)
				if err == nil || errors.Is(err, ingest.ErrInvalidRecords) {
					outcome += "\n" + dumpWithoutRuns(t, st)
				}
				outcomes = append(outcomes, outcome)
			}
			for i, o := range outcomes[1:] {
				if o != outcomes[0] {
					t.Errorf("spilled (%d) and in-memory outcomes differ:\n%s\nin memory:\n%s", i+1, firstLines(o), firstLines(outcomes[0]))
				}
			}
		})
	}
}

func firstLines(s string) string {
	lines := strings.SplitN(s, "\n", 4)
	return strings.Join(lines[:min(3, len(lines))], "\n")
}

// TestIngestIDCheckTempDir: a temporary directory that does not exist is
// an error that names it, once the ids outgrow the working set.
func TestIngestIDCheckTempDir(t *testing.T) {
	var b strings.Builder
	for i := range 2000 {
		b.WriteString(idLine(i+1, 0) + "\n")
	}
	in := writeFile(t, "in.jsonl", b.String())
	missing := filepath.Join(t.TempDir(), "missing")
	_, err := ingest.File(context.Background(), openStore(t), in, "in.jsonl", ingest.Options{Policy: normalize.Default(), WorkMem: ingest.MinWorkMem, TempDir: missing})
	if err == nil || !strings.Contains(err.Error(), missing) {
		t.Fatalf("ingest with a missing temporary directory = %v, want an error naming %s", err, missing)
	}
}
