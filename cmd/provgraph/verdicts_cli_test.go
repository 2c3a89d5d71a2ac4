package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/provgraph/provgraph/internal/resolve/fixtureweb"
)

// TestVerdictsOnFixtureWeb resolves citations of the fixture web and
// asserts the verdicts, relations, reasons and passage checks that
// groups, lineage and stats derive from the evidence (issue 14): a page
// whose bytes change on every fetch is identity-confirmed by its text, not
// a conflict; 404s and soft errors confirm and relate nothing; a
// syndicated copy on another host is a same-text relation for review; an
// article whose text changed is a conflict.
func TestVerdictsOnFixtureWeb(t *testing.T) {
	web := fixtureweb.Start(t)
	a := strings.Replace(web.A.URL, "localhost", "127.0.0.1", 1)
	b := strings.Replace(web.B.URL, "localhost", "127.0.0.1", 1)
	db := filepath.Join(t.TempDir(), "v.db")
	type cite struct{ id, url, text string }
	cites := []cite{
		{"guide-utm", a + fixtureweb.Guide + "?utm_source=chatgpt.com", fixtureweb.PassagePresent},
		{"guide-intro", a + fixtureweb.Guide + "#intro", fixtureweb.PassageParaphrased},
		{"guide-medium", a + fixtureweb.Guide + "?utm_medium=social", fixtureweb.PassageAbsent},
		{"gone-1", a + fixtureweb.NotFound, ""},
		{"gone-2", a + "/missing-one", ""},
		{"gone-3", a + "/missing-two", ""},
		{"wire", b + fixtureweb.SyndicatedPath, ""},
		{"login-1", a + fixtureweb.Login, ""},
		{"login-2", a + fixtureweb.Login + "?utm_source=x", ""},
		{"soft404-1", a + fixtureweb.Soft404, ""},
		{"soft404-2", a + fixtureweb.Soft404 + "#top", ""},
		{"changing-1", a + fixtureweb.Changing, ""},
		{"changing-2", a + fixtureweb.Changing + "?utm_source=y", ""},
	}
	var in strings.Builder
	for _, c := range cites {
		line := map[string]string{"citation_id": c.id, "observed_at": "2026-11-02T10:00:00Z", "raw_url": c.url}
		if c.text != "" {
			line["cited_text"] = c.text
		}
		j, _ := json.Marshal(line)
		in.Write(append(j, '\n'))
	}
	run := func(stdin string, args ...string) string {
		t.Helper()
		var stdout, stderr bytes.Buffer
		if code := Run(context.Background(), args, strings.NewReader(stdin), &stdout, &stderr); code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, stderr.String())
		}
		return stdout.String()
	}
	run(in.String(), "ingest", "--db", db, "-")
	run("", "resolve", "--db", db, "--allow-private")

	var rep struct {
		Groups []struct {
			ID      string `json:"id"`
			Verdict string `json:"verdict"`
			Members []struct {
				CitationID string   `json:"citation_id"`
				Reasons    []string `json:"reasons"`
				Passage    *struct {
					Found  bool     `json:"found"`
					Score  *float64 `json:"score"`
					Method string   `json:"method"`
				} `json:"passage"`
			} `json:"members"`
			Relations []struct {
				Type, To, Evidence string
				Review             bool
			} `json:"relations"`
		} `json:"groups"`
		Counts map[string]int `json:"counts"`
	}
	out := run("", "groups", "--db", db, "--format", "json", "--min-size", "1")
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	groupOf := map[string]int{}
	for i, g := range rep.Groups {
		for _, m := range g.Members {
			groupOf[m.CitationID] = i
		}
	}
	for _, c := range cites {
		if _, ok := groupOf[c.id]; !ok {
			t.Fatalf("%s is in no group:\n%s", c.id, out)
		}
	}
	g := func(id string) int { return groupOf[id] }
	verdict := func(id string) string { return rep.Groups[g(id)].Verdict }
	same := func(x, y string) bool { return g(x) == g(y) }

	// The guide: three fetches, three byte hashes, one text.
	if !same("guide-utm", "guide-intro") || !same("guide-utm", "guide-medium") {
		t.Fatalf("the guide's citations are not one group:\n%s", out)
	}
	if v := verdict("guide-utm"); v != "identity-confirmed" {
		t.Errorf("guide: verdict %s, want identity-confirmed (bytes change, text does not)", v)
	}
	for _, m := range rep.Groups[g("guide-utm")].Members {
		if !slices.Contains(m.Reasons, "identity confirmed: text digest equal") {
			t.Errorf("guide member %s: reasons %q do not say the text digest confirmed it", m.CitationID, m.Reasons)
		}
	}
	// Passages: present, paraphrased, absent.
	for id, want := range map[string]bool{"guide-utm": true, "guide-intro": false, "guide-medium": false} {
		for _, m := range rep.Groups[g(id)].Members {
			if m.CitationID != id {
				continue
			}
			if m.Passage == nil || m.Passage.Score == nil || m.Passage.Found != want {
				t.Errorf("%s: passage %+v, want found %v with a score", id, m.Passage, want)
			} else if want && m.Passage.Method != "exact" {
				t.Errorf("%s: passage method %q, want exact", id, m.Passage.Method)
			}
		}
	}
	for _, id := range []string{"gone-1", "wire", "changing-1"} {
		for _, m := range rep.Groups[g(id)].Members {
			if m.Passage != nil {
				t.Errorf("%s has no cited_text but a passage %+v", m.CitationID, m.Passage)
			}
		}
	}

	// 404s: three groups, none confirmed, none linked.
	if same("gone-1", "gone-2") || same("gone-2", "gone-3") {
		t.Errorf("the 404s were grouped")
	}
	for _, id := range []string{"gone-1", "gone-2", "gone-3"} {
		gr := rep.Groups[g(id)]
		if gr.Verdict == "identity-confirmed" {
			t.Errorf("%s: a 404 is identity-confirmed", id)
		}
		if len(gr.Relations) != 0 {
			t.Errorf("%s: a 404 has relations %+v", id, gr.Relations)
		}
	}
	// Login wall and soft 404: two members each with the same page, no
	// confirmation, no relation.
	for _, id := range []string{"login-1", "soft404-1"} {
		gr := rep.Groups[g(id)]
		if len(gr.Members) != 2 || gr.Verdict == "identity-confirmed" || len(gr.Relations) != 0 {
			t.Errorf("%s: %d members, verdict %s, relations %+v: a soft error confirms and relates nothing", id, len(gr.Members), gr.Verdict, gr.Relations)
		}
		if r := gr.Members[0].Reasons; !strings.Contains(strings.Join(r, "\n"), "unsuccessful retrieval") {
			t.Errorf("%s: reasons %q do not say the retrieval is no evidence", id, r)
		}
	}
	// The edited article.
	if !same("changing-1", "changing-2") || verdict("changing-1") != "conflict" {
		t.Errorf("changing: verdict %s, want conflict", verdict("changing-1"))
	}
	// The syndicated copy: a same-text relation, both ways, for review.
	rel := func(from, to string) bool {
		for _, r := range rep.Groups[g(from)].Relations {
			if r.Type == "same-text" && r.To == rep.Groups[g(to)].ID && r.Review && strings.Contains(r.Evidence, "text digest sha256:") {
				return true
			}
		}
		return false
	}
	if same("wire", "guide-utm") || !rel("wire", "guide-utm") || !rel("guide-utm", "wire") {
		t.Errorf("the syndicated copy is not a same-text relation of the guide for review:\n%s", out)
	}
	for i, gr := range rep.Groups {
		for _, r := range gr.Relations {
			if r.Type == "same-content-hash" || (r.Type == "same-text" && i != g("wire") && i != g("guide-utm")) {
				t.Errorf("unexpected relation %s from %s: %s", r.Type, gr.ID, r.Evidence)
			}
		}
	}

	// By default (--min-size 2) the single-member syndicated copy is
	// listed all the same: it takes part in a relation to review.
	if out := run("", "groups", "--db", db, "--format", "json"); !strings.Contains(out, `"citation_id": "wire"`) {
		t.Errorf("groups without --min-size does not list the syndicated copy:\n%s", out)
	}

	// Lineage: the passage, the extraction and the capture reference.
	var lin []struct {
		Passage *struct {
			Found bool `json:"found"`
		} `json:"passage"`
		Group *struct {
			Verdict   string `json:"verdict"`
			Relations []struct {
				Type string `json:"type"`
				To   string `json:"to"`
			} `json:"relations"`
		} `json:"group"`
		Retrievals []struct {
			SnapshotRef string `json:"snapshot_ref"`
			Extractions []struct {
				Extractor  string `json:"extractor"`
				TextDigest string `json:"text_digest"`
				CaptureRef string `json:"capture_ref"`
			} `json:"extractions"`
		} `json:"retrievals"`
	}
	out = run("", "lineage", "--db", db, "--format", "json", "guide-utm")
	if err := json.Unmarshal([]byte(out), &lin); err != nil {
		t.Fatal(err)
	}
	if len(lin) != 1 || lin[0].Passage == nil || !lin[0].Passage.Found || len(lin[0].Retrievals) != 1 || len(lin[0].Retrievals[0].Extractions) != 1 {
		t.Fatalf("lineage guide-utm:\n%s", out)
	}
	if rt := lin[0].Retrievals[0]; !strings.HasPrefix(rt.SnapshotRef, "warc:") || rt.Extractions[0].CaptureRef != rt.SnapshotRef || !strings.HasPrefix(rt.Extractions[0].TextDigest, "sha256:") {
		t.Errorf("lineage: snapshot_ref %q, extraction's capture_ref %q: want the same warc: reference", rt.SnapshotRef, rt.Extractions[0].CaptureRef)
	}
	// The neighbourhood finds the syndicated copy by its text digest.
	if gr := lin[0].Group; gr == nil || gr.Verdict != "identity-confirmed" || len(gr.Relations) != 1 || gr.Relations[0].Type != "same-text" || gr.Relations[0].To != rep.Groups[g("wire")].ID {
		t.Errorf("lineage guide-utm: group %+v, want identity-confirmed with a same-text relation to %s", gr, rep.Groups[g("wire")].ID)
	}
	text := run("", "lineage", "--db", db, "guide-utm")
	for _, want := range []string{"extraction by provgraph-extract/", "capture:", "text digest:", "cited passage: found (exact"} {
		if !strings.Contains(text, want) {
			t.Errorf("lineage text lacks %q:\n%s", want, text)
		}
	}

	// Stats: the groups by the evidence that confirmed them.
	var st struct {
		ByConfirmation map[string]int `json:"groups_by_confirmation"`
	}
	if err := json.Unmarshal([]byte(run("", "stats", "--db", db, "--format", "json")), &st); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(st.ByConfirmation) != "map[text-digest:1]" {
		t.Errorf("stats: groups_by_confirmation %v, want text-digest 1", st.ByConfirmation)
	}
	if out := run("", "stats", "--db", db, "--format", "json", "--explain", "confirmed:text-digest"); !strings.Contains(out, "guide-utm") {
		t.Errorf("stats --explain confirmed:text-digest:\n%s", out)
	}
}
