package ingest_test

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/provgraph/provgraph/internal/ingest"
	"github.com/provgraph/provgraph/internal/model"
	"github.com/provgraph/provgraph/internal/testenv"
)

const schemaFile = "../../testdata/citation.schema.json"

func loadSchema(t *testing.T) map[string]any {
	t.Helper()
	b, err := os.ReadFile(schemaFile)
	if err != nil {
		t.Fatal(err)
	}
	var s map[string]any
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatalf("%s: %v", schemaFile, err)
	}
	return s
}

// TestSchemaMatchesRecord keeps testdata/citation.schema.json in step with
// the Go record type: at every level, the schema's properties are the
// struct's json field names, its required fields are those tagged without
// omitempty (the ones ParseRecord insists on), and no other field is
// allowed.
func TestSchemaMatchesRecord(t *testing.T) {
	root := loadSchema(t)
	if root["$schema"] != "https://json-schema.org/draft/2020-12/schema" {
		t.Errorf("$schema = %v, want draft 2020-12", root["$schema"])
	}
	resolve := func(node map[string]any) map[string]any {
		ref, ok := node["$ref"].(string)
		if !ok {
			return node
		}
		name, ok := strings.CutPrefix(ref, "#/$defs/")
		if !ok {
			t.Fatalf("$ref %q: want #/$defs/NAME", ref)
		}
		def, ok := root["$defs"].(map[string]any)[name].(map[string]any)
		if !ok {
			t.Fatalf("$ref %q names no definition", ref)
		}
		return def
	}
	var check func(path string, node map[string]any, typ reflect.Type)
	check = func(path string, node map[string]any, typ reflect.Type) {
		node = resolve(node)
		if node["type"] != "object" || node["additionalProperties"] != false {
			t.Errorf("%s: want \"type\": \"object\" and \"additionalProperties\": false", path)
		}
		props, _ := node["properties"].(map[string]any)
		var names, required, schemaNames, schemaRequired []string
		for i := 0; i < typ.NumField(); i++ {
			f := typ.Field(i)
			name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
			names = append(names, name)
			if !strings.Contains(opts, "omitempty") {
				required = append(required, name)
			}
			prop, ok := props[name].(map[string]any)
			if !ok {
				continue // reported below
			}
			ft := f.Type
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			switch {
			case ft.Kind() == reflect.Struct:
				check(path+"."+name, prop, ft)
			case ft.Kind() == reflect.Slice && ft.Elem().Kind() == reflect.Struct:
				prop = resolve(prop)
				items, _ := prop["items"].(map[string]any)
				if prop["type"] != "array" || items == nil {
					t.Errorf("%s.%s: want an array with items", path, name)
					continue
				}
				check(path+"."+name+"[]", items, ft.Elem())
			}
		}
		for name := range props {
			schemaNames = append(schemaNames, name)
		}
		req, _ := node["required"].([]any)
		for _, r := range req {
			schemaRequired = append(schemaRequired, r.(string))
		}
		slices.Sort(names)
		slices.Sort(schemaNames)
		slices.Sort(required)
		slices.Sort(schemaRequired)
		if !slices.Equal(names, schemaNames) {
			t.Errorf("%s: schema properties %v, Go fields %v", path, schemaNames, names)
		}
		if !slices.Equal(required, schemaRequired) {
			t.Errorf("%s: schema requires %v, Go requires %v", path, schemaRequired, required)
		}
	}
	check("record", root, reflect.TypeOf(model.Record{}))
}

// TestSchemaAgreesWithParseRecord is a differential test: an independent
// JSON Schema validator (python3-jsonschema) and ParseRecord must accept
// and reject the same lines, from the bundled example and a table of
// lines wrong in ways a schema can express.
func TestSchemaAgreesWithParseRecord(t *testing.T) {
	// Debian's python3-* packages install into /usr/bin/python3, which may
	// not be the first python3 on PATH.
	python := ""
	for _, p := range []string{"/usr/bin/python3", "python3"} {
		if path, err := exec.LookPath(p); err == nil && exec.Command(path, "-c", "import jsonschema").Run() == nil {
			python = path
			break
		}
	}
	if python == "" {
		testenv.MissingTool(t, "no python3 with jsonschema (Debian package python3-jsonschema): skipping this check")
	}
	example, err := os.ReadFile("../../testdata/citations.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(example)), "\n")
	const ok = `"raw_url":"x","observed_at":"2025-01-01T00:00:00Z"`
	lines = append(lines,
		`{"observed_at":"2025-01-01T00:00:00Z"}`,
		`{"raw_url":"x"}`,
		`{"raw_url":"x","observed_at":"yesterday"}`,
		`{"raw_url":"x","observed_at":"2025-01-01t00:00:00z"}`,
		`{"raw_url":"x","observed_at":"2025-01-01T00:00:00"}`,
		`{"raw_url":"x","observed_at":"2025-01-01T00:00:00+14:00"}`,
		`{"raw_url":"x","observed_at":"2025-01-01T00:00:00+14:01"}`,
		`{"raw_url":"x","observed_at":"2025-01-01T00:00:00-23:59"}`,
		`{"raw_url":"x","observed_at":"2025-01-01T00:00:00.123456789+05:30"}`,
		`{`+ok+`,"position":3.5}`,
		`{`+ok+`,"position":-1}`,
		`{`+ok+`,"position":"3"}`,
		`{`+ok+`,"position":0}`,
		`{`+ok+`,"position":2147483649}`,
		`{`+ok+`,"url":"y"}`,
		`{"raw_url":7,"observed_at":"2025-01-01T00:00:00Z"}`,
		`{`+ok+`,"retrieval":[]}`,
		`{`+ok+`,"retrieval":{"final_status":200,"hops":[{"from":"a","to":"b","status":301,"at":"2025-01-01T00:00:00Z","location":"/b"}]}}`,
		`{`+ok+`,"retrieval":{"hops":[{"from":"a","to":"b"}]}}`,
		`{`+ok+`,"retrieval":{"hops":[{"from":"","to":"b","status":301}]}}`,
		`{`+ok+`,"retrieval":{"hops":[{"from":"a","to":"b","status":700}]}}`,
		`{`+ok+`,"retrieval":{"final_status":"200"}}`,
		`{`+ok+`,"retrieval":{"status":200}}`,
		`{`+ok+`,"retrieval":{"canonical":[{"url":"u","source":"platform"}]}}`,
		`{`+ok+`,"retrieval":{"canonical":[{"url":"u","source":"meta"}]}}`,
		`{`+ok+`,"retrieval":{"canonical":[{"source":"html-link"}]}}`,
		`{`+ok+`,"relations":[{"type":"archive_of","target":"t","captured_at":"2020-01-01T00:00:00Z"}]}`,
		`{`+ok+`,"relations":[{"type":"copy_of","target":"t"}]}`,
		`{`+ok+`,"relations":[{"type":"format_of","target":"t","format":"epub"}]}`,
		`{`+ok+`,"relations":[{"type":"format_of","target":"t","format":"amp","extra":1}]}`,
		`{`+ok+`,"relations":[{"type":"mirror_of"}]}`,
	)
	script := `import json, sys, jsonschema
schema = json.load(open(sys.argv[1]))
jsonschema.Draft202012Validator.check_schema(schema)
v = jsonschema.Draft202012Validator(schema)
for line in sys.stdin:
    print("ok" if v.is_valid(json.loads(line)) else "invalid")
`
	cmd := exec.Command(python, "-c", script, schemaFile)
	cmd.Stdin = strings.NewReader(strings.Join(lines, "\n") + "\n")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("jsonschema: %v\n%s", err, stderr.Bytes())
	}
	verdicts := strings.Fields(string(out))
	if len(verdicts) != len(lines) {
		t.Fatalf("jsonschema gave %d verdicts for %d lines", len(verdicts), len(lines))
	}
	for i, line := range lines {
		_, err := ingest.ParseRecord([]byte(line), "in.jsonl", i+1)
		if got, want := err == nil, verdicts[i] == "ok"; got != want {
			t.Errorf("ParseRecord(%s) = %v, but the schema says %s", line, err, verdicts[i])
		}
	}
}
