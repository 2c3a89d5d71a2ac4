package model_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/provgraph/provgraph/internal/model"
)

// TestMint checks the minting rule against values computed outside Go
// (Python's hashlib over the same length-prefixed fields), so that a change
// to Mint, which would rename every node of every database, fails here.
func TestMint(t *testing.T) {
	for _, c := range []struct {
		kind   string
		fields []string
		want   string
	}{
		{"citation", []string{"c-1"}, "https://w3id.org/provgraph/id/citation/c1fd7addd03d40b9ad572ec5c16ae325"},
		{"x", []string{"ab", "c"}, "https://w3id.org/provgraph/id/x/9b76d28dd8e4df14959e54b0ac230c23"},
		{"x", []string{"a", "bc"}, "https://w3id.org/provgraph/id/x/6d86147652951000d20b8d38b60760d0"},
	} {
		if got := model.Mint(c.kind, c.fields...); got != c.want {
			t.Errorf("Mint(%q, %q) = %s, want %s", c.kind, c.fields, got, c.want)
		}
	}
	if !strings.HasPrefix(model.AgentIRI, model.IDBase) {
		t.Errorf("AgentIRI %s is not under IDBase", model.AgentIRI)
	}
}

// TestRelationKinds checks that each kind is found by its name and by its
// class, and that the input's names are the four the schema lists.
func TestRelationKinds(t *testing.T) {
	var names []string
	for _, k := range model.RelationKinds {
		names = append(names, k.Name)
		if got, ok := model.RelationKindNamed(k.Name); !ok || got != k {
			t.Errorf("RelationKindNamed(%q) = %v, %v", k.Name, got, ok)
		}
		if got, ok := model.RelationKindOfClass(k.Class); !ok || got != k {
			t.Errorf("RelationKindOfClass(%q) = %v, %v", k.Class, got, ok)
		}
		if k.Description == "" {
			t.Errorf("%s has no description", k.Name)
		}
	}
	if want := []string{model.RelFormatOf, model.RelMirrorOf, model.RelSyndicationOf, model.RelArchiveOf}; !slices.Equal(names, want) {
		t.Errorf("kinds %v, want %v", names, want)
	}
	if _, ok := model.RelationKindNamed("same_as"); ok {
		t.Error("an unknown kind was found")
	}
}

// TestVerdicts checks that the codebook lists each verdict once, with a
// definition and help lines.
func TestVerdicts(t *testing.T) {
	var names []string
	for _, v := range model.Verdicts {
		names = append(names, v.Name)
		if v.Label == "" || v.Definition == "" || len(v.Short) == 0 {
			t.Errorf("%s: incomplete entry %+v", v.Name, v)
		}
	}
	want := []string{model.VerdictIdentityConfirmed, model.VerdictNormalizedCompare, model.VerdictNeedsContentCheck, model.VerdictConflict}
	if !slices.Equal(names, want) {
		t.Errorf("verdicts %v, want %v", names, want)
	}
}

// TestRecordJSONKeepsTheInputForm checks that a record marshals with the
// input's field names and integers as their text, the form Digest hashes:
// a change here changes the id of every record without citation_id.
func TestRecordJSONKeepsTheInputForm(t *testing.T) {
	line := `{"observed_at":"2025-01-01T00:00:00Z","raw_url":"https://a.example/","position":3,` +
		`"retrieval":{"hops":[{"from":"http://a.example/","to":"https://a.example/","status":301}],"final_status":200},` +
		`"relations":[{"type":"format_of","target":"https://b.example/","format":"amp"}]}`
	var r model.Record
	if err := json.Unmarshal([]byte(line), &r); err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(&r)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"position":"3","observed_at":"2025-01-01T00:00:00Z","raw_url":"https://a.example/",` +
		`"retrieval":{"hops":[{"from":"http://a.example/","to":"https://a.example/","status":"301"}],"final_status":"200"},` +
		`"relations":[{"type":"format_of","target":"https://b.example/","format":"amp"}]}`
	if string(b) != want {
		t.Errorf("marshalled\n%s\nwant\n%s", b, want)
	}
	if r.ID() != "c-"+r.Digest()[len("sha256:"):len("sha256:")+32] {
		t.Errorf("ID %s does not come from Digest %s", r.ID(), r.Digest())
	}
}
