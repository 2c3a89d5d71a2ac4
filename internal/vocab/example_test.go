package vocab_test

import (
	"fmt"

	"github.com/provgraph/provgraph/internal/vocab"
)

// A citation node carries its pg: class and its PROV base class.
func Example() {
	fmt.Println(vocab.RDFType, vocab.Citation)
	fmt.Println(vocab.RDFType, vocab.ProvEntity)
	fmt.Println(vocab.Cites)
	// Output:
	// http://www.w3.org/1999/02/22-rdf-syntax-ns#type https://w3id.org/provgraph/ns#Citation
	// http://www.w3.org/1999/02/22-rdf-syntax-ns#type http://www.w3.org/ns/prov#Entity
	// https://w3id.org/provgraph/ns#cites
}
