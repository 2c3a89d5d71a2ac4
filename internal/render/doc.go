// Package render writes query and normalization results for people and
// programs: the text, table, JSON, CSV and Graphviz DOT formats of
// groups, lineage, stats (with --explain), policy-diff, policy check,
// check's counters and normalize, the escaping that keeps stored text from acting on a terminal
// (textsafe.go), and the --redact-userinfo copy of a result (Redacted).
//
// # Basics
//
// Every writer takes an io.Writer and the results (query.Report,
// query.Lineage, query.Stats, query.PolicyDiff, normalize.Result) and
// returns the first error; none prints to os.Stdout or decides an exit
// status. The CLI (cmd/provgraph) and an HTTP handler call the same
// writers, so their outputs are the same bytes. To add an output format,
// add a writer here beside the others of that result, with a golden file
// in testdata/ (go test ./internal/render -update rewrites them), and
// name it in the command's --format help.
//
// # Caveats
//
//   - Each value shown in text, table, CSV or DOT output goes through
//     EscapeText, QuoteIfNeeded, ShowValue or EscapeLine: it came from the
//     input or a fetched page. JSON holds the values unescaped.
//   - Redaction is applied to the results before they are written
//     (Redacted, RedactIf, RedactGroups); a writer never redacts on its own.
//   - Groups streams the groups of a report a group at a time, and its
//     JSON is byte for byte what encoding/json writes for the whole report
//     (appendGroupJSON is tested against it).
//
// render imports query and normalize for their result types. It must not
// import internal/graph, bbolt or cayley, nor open a database (its tests
// run on frozen results in testdata/in, not on a store):
// opening, choosing the policy and classifying errors belong to
// internal/service, flags and help to cmd/provgraph.
package render
