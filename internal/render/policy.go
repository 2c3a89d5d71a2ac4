package render

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/provgraph/provgraph/internal/normalize"
)

// PolicyCheck writes what policy check prints of a valid policy: the
// identity every result carries, its schemes, default ports and counts,
// and the action of each rule in sequence order.
func PolicyCheck(out io.Writer, p *normalize.Policy) error {
	w := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintf(w, "name:\t%s\nversion:\t%s\ndigest:\t%s\nsource:\t%s\n", EscapeText(p.Name()), EscapeText(p.Version()), p.Digest(), EscapeText(p.Source()))
	ports := p.DefaultPorts()
	var portList []string
	for _, s := range slices.Sorted(maps.Keys(ports)) {
		portList = append(portList, fmt.Sprintf("%s=%d", s, ports[s]))
	}
	fmt.Fprintf(w, "schemes:\t%s\ndefault ports:\t%s\ntracking params:\t%d\nhost rules:\t%d\n\nrules (in sequence order):\n",
		strings.Join(p.Schemes(), ", "), strings.Join(portList, " "), len(p.TrackingParams()), len(p.HostRules()))
	for _, r := range normalize.Rules() {
		kind, _ := r.Kind()
		k := "parse"
		if kind == normalize.PolicyRule {
			k = "policy"
		}
		fmt.Fprintf(w, "  %s\t%s\t%s\n", r, k, p.Action(r))
	}
	return w.Flush()
}
