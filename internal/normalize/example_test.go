package normalize_test

import (
	"fmt"

	"github.com/provgraph/provgraph/internal/normalize"
)

func ExampleNormalizer_Normalize() {
	n, err := normalize.New(normalize.Default(), nil)
	if err != nil {
		panic(err)
	}
	res, err := n.Normalize("HTTP://Example.com:80/guide?utm_source=chat#pricing")
	if err != nil {
		panic(err)
	}
	fmt.Println("raw:     ", res.Raw)
	fmt.Println("key:     ", res.Key)
	fmt.Println("fragment:", res.Fragment)
	fmt.Println("removed: ", res.RemovedParams())
	fmt.Println("compare: ", res.Compare)
	for _, s := range res.Steps() {
		fmt.Printf("%-18s %q -> %q\n", s.Rule, s.Before, s.After)
	}
	// Output:
	// raw:      HTTP://Example.com:80/guide?utm_source=chat#pricing
	// key:      http://example.com/guide
	// fragment: pricing
	// removed:  [utm_source=chat]
	// compare:  normalized-compare
	// lowercase-scheme   "HTTP" -> "http"
	// lowercase-host     "Example.com" -> "example.com"
	// default-port       ":80" -> ""
	// drop-fragment      "#pricing" -> ""
	// tracking-params    "?utm_source=chat" -> ""
}

func ExampleNormalizer_Normalize_rejected() {
	n, _ := normalize.New(nil, nil) // nil policy: the default
	_, err := n.Normalize("http://example.com/100%zz")
	fmt.Println(err)
	// Output:
	// normalize "http://example.com/100%zz": invalid-percent-escape at byte 22: "%zz" is a validation error the policy does not tolerate (policy provgraph-default: rules.invalid-percent-escape = "reject")
}

func ExampleNew_base() {
	n, err := normalize.New(nil, &normalize.Options{Base: "https://example.test/docs/guide/"})
	if err != nil {
		panic(err)
	}
	res, _ := n.Normalize("../report?lang=fr")
	fmt.Println(res.Key)
	// Output:
	// https://example.test/docs/report?lang=fr
}
