package query_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/provgraph/provgraph/internal/model"
	"github.com/provgraph/provgraph/internal/query"
)

// TestVerdictsFromSimHashes checks the verdict and relation rules on
// SimHashes alone (issue 14): texts within extract.NearThreshold confirm
// identity and relate groups, texts farther apart are a conflict, and an
// unsuccessful retrieval is no evidence.
func TestVerdictsFromSimHashes(t *testing.T) {
	pol := &query.PolicyRef{}
	n := 0
	cite := func(key string, sim uint64, digest, hash, status string) *query.Citation {
		n++
		return &query.Citation{
			ID: fmt.Sprintf("c%02d", n), Raw: "https://" + key + fmt.Sprintf("/?n=%d", n),
			Norm: &query.Normalization{Policy: pol, Key: "https://" + key + "/"},
			Retrievals: []*query.Retrieval{{
				Node: fmt.Sprintf("r%d", n), FinalStatus: query.Integer(status), ContentHash: hash,
				Extractions: []*query.Extraction{{Extractor: "x/1", SimHash: fmt.Sprintf("%016x", sim), TextDigest: digest}},
			}},
		}
	}
	snap := &query.Snapshot{Citations: []*query.Citation{
		cite("near.test", 0x1111000000000000, "sha256:a", "h1", "200"),
		cite("near.test", 0x1111000000000007, "sha256:b", "h2", "200"), // 3 bits apart
		cite("far.test", 0x2222000000000000, "sha256:c", "h3", "200"),
		cite("far.test", 0x222200000000000f, "sha256:d", "h4", "200"), // 4 bits apart
		cite("copy-a.test", 0x4444000000000000, "sha256:e", "h5", "200"),
		cite("copy-b.test", 0x4444000000000001, "sha256:f", "h6", "200"), // 1 bit apart, another key
		cite("gone.test", 0x8888000000000000, "sha256:g", "h7", "404"),
		cite("gone.test", 0x8888000000000000, "sha256:g", "h7", "404"),
		cite("gone-too.test", 0x8888000000000000, "sha256:g", "h7", "404"),
	}}
	rep := query.Groups(snap, query.GroupOptions{MinSize: 1})
	byKey := map[string]*query.Group{}
	for _, g := range rep.Groups {
		byKey[g.Key] = g
	}
	for _, tc := range []struct {
		key, verdict, reason string
		relations            []string
	}{
		{"https://near.test/", model.VerdictIdentityConfirmed, "identity confirmed: near-identical text (SimHash distance 3)", nil},
		{"https://far.test/", model.VerdictConflict, "main texts of successful retrievals differ (SimHash distance 4, beyond 3)", nil},
		{"https://copy-a.test/", model.VerdictNormalizedCompare, "", []string{"same-text https://copy-b.test/ near-identical main text (SimHash distance 1) under different keys"}},
		{"https://copy-b.test/", model.VerdictNormalizedCompare, "", []string{"same-text https://copy-a.test/ near-identical main text (SimHash distance 1) under different keys"}},
		{"https://gone.test/", model.VerdictNormalizedCompare, "", nil},
		{"https://gone-too.test/", model.VerdictNormalizedCompare, "", nil},
	} {
		g := byKey[tc.key]
		if g == nil {
			t.Fatalf("no group of %s", tc.key)
		}
		if g.Verdict != tc.verdict {
			t.Errorf("%s: verdict %s, want %s", tc.key, g.Verdict, tc.verdict)
		}
		if tc.reason != "" && !slices.Contains(g.Members[0].Reasons, tc.reason) {
			t.Errorf("%s: reasons %q lack %q", tc.key, g.Members[0].Reasons, tc.reason)
		}
		var rels []string
		for _, r := range g.Relations {
			to := ""
			for _, o := range rep.Groups {
				if o.ID == r.To {
					to = o.Key
				}
			}
			if !r.Review {
				t.Errorf("%s: relation %s is not for review", tc.key, r.Type)
			}
			rels = append(rels, r.Type+" "+to+" "+r.Evidence)
		}
		if strings.Join(rels, "\n") != strings.Join(tc.relations, "\n") {
			t.Errorf("%s: relations\n%s\nwant\n%s", tc.key, strings.Join(rels, "\n"), strings.Join(tc.relations, "\n"))
		}
	}
	if got := rep.Counts["relation:same-text"]; got != 2 {
		t.Errorf("counts: %d same-text relations, want 2", got)
	}
}

// TestGroupRelationKinds checks that every relation type groups derives
// is described once in model.GroupRelationKinds.
func TestGroupRelationKinds(t *testing.T) {
	var names []string
	for _, k := range model.GroupRelationKinds {
		if k.Description == "" {
			t.Errorf("%s has no description", k.Name)
		}
		names = append(names, k.Name)
	}
	want := []string{query.RelCrossHostRedirect, query.RelCanonical, query.RelSharedRedirect, query.RelSameContent, query.RelSameText}
	if !slices.Equal(names, want) {
		t.Errorf("group relation kinds %v, want %v", names, want)
	}
}
