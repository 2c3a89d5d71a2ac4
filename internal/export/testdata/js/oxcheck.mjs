// oxcheck.mjs loads an N-Quads export into an Oxigraph store (npm package
// oxigraph, whose parser validates every IRI and language tag) and runs
// SPARQL checks on it, for internal/export/interop_test.go. It prints one
// JSON object; a load error is an exception and a non-zero exit.
//
// Usage: node oxcheck.mjs FILE.nq
import { readFileSync } from "node:fs";
import oxigraph from "oxigraph";

const file = process.argv[2];
if (!file) {
  console.error("usage: node oxcheck.mjs FILE.nq");
  process.exit(2);
}
const store = new oxigraph.Store();
store.load(readFileSync(file, "utf8"), { format: "application/n-quads" });

const prefixes = `
PREFIX xsd: <http://www.w3.org/2001/XMLSchema#>
PREFIX rdf: <http://www.w3.org/1999/02/22-rdf-syntax-ns#>
PREFIX prov: <http://www.w3.org/ns/prov#>
PREFIX pg: <https://w3id.org/provgraph/ns#>
`;
// Every statement, in the default graph or a named one.
const any = "{ { ?s ?p ?o } UNION { GRAPH ?g { ?s ?p ?o } } }";

function rows(query) {
  return store.query(prefixes + query).map((b) => Object.fromEntries([...b].map(([k, v]) => [k, v.value])));
}

const out = {};
out.quads = store.size;
// Literals whose lexical form is not in the lexical space of their
// datatype: the cast fails, so ?v stays unbound. xsd:dateTime must also
// carry a time zone offset (RFC 3339), and xsd:integer must not be a
// decimal or exponent form that a lenient cast would accept.
out.illTypedDateTime = rows(`SELECT ?s ?p ?o WHERE { ${any}
  FILTER(isLiteral(?o) && datatype(?o) = xsd:dateTime)
  BIND(xsd:dateTime(STR(?o)) AS ?v)
  FILTER(!BOUND(?v) || !REGEX(STR(?o), "^-?[0-9]{4,}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\\\\.[0-9]+)?(Z|[+-][0-9]{2}:[0-9]{2})$"))
}`);
out.illTypedInteger = rows(`SELECT ?s ?p ?o WHERE { ${any}
  FILTER(isLiteral(?o) && datatype(?o) = xsd:integer)
  BIND(xsd:integer(STR(?o)) AS ?v)
  FILTER(!BOUND(?v) || !REGEX(STR(?o), "^[+-]?[0-9]+$"))
}`);
out.illTypedBoolean = rows(`SELECT ?s ?p ?o WHERE { ${any}
  FILTER(isLiteral(?o) && datatype(?o) = xsd:boolean && !(STR(?o) IN ("true", "false", "1", "0")))
}`);
// Every datatype in use, with its count. A datatype written as a prefixed
// name ("xsd:dateTime" inside <...>) would parse as an IRI with the scheme
// "xsd"; the test accepts only the full XSD and RDF IRIs.
out.datatypes = rows(`SELECT ?dt (COUNT(*) AS ?n) WHERE { ${any}
  FILTER(isLiteral(?o)) BIND(datatype(?o) AS ?dt)
} GROUP BY ?dt ORDER BY ?dt`);
out.prefixedDatatypes = rows(`SELECT DISTINCT ?dt WHERE { ${any}
  FILTER(isLiteral(?o)) BIND(STR(datatype(?o)) AS ?dt)
  FILTER(REGEX(?dt, "^(xsd|rdf|rdfs|owl|prov|pg|pgid|dcat|dct|void|skos):"))
}`);
// The typed values the data model promises (MODEL.md rule 3).
out.predicateDatatypes = rows(`SELECT ?p ?dt (COUNT(*) AS ?n) WHERE { ${any}
  FILTER(isLiteral(?o)) BIND(datatype(?o) AS ?dt)
} GROUP BY ?p ?dt ORDER BY ?p ?dt`);
// The review groups of an export with --include-groups, from their named
// graph: id, verdict, members, and the citation ids of the members read
// from the data (the default graph), tab-separated and sorted.
out.reviewGroups = rows(`SELECT ?id ?verdict (COUNT(DISTINCT ?m) AS ?members) (GROUP_CONCAT(DISTINCT ?cid; SEPARATOR="\t") AS ?citations) WHERE {
  GRAPH ?g { ?grp a pg:ReviewGroup ; pg:groupId ?id ; pg:verdict ?verdict ; prov:hadMember ?m }
  OPTIONAL { ?m pg:citationId ?cid }
} GROUP BY ?id ?verdict ORDER BY ?id`);
// The comparison keys each group was derived from, read from the data.
out.groupKeys = rows(`SELECT DISTINCT ?id ?key WHERE {
  GRAPH ?g { ?grp a pg:ReviewGroup ; pg:groupId ?id ; prov:wasDerivedFrom ?k }
  ?k a pg:ComparisonKey ; pg:text ?key .
} ORDER BY ?id ?key`);
// IRIs a statement of the groups graph points to that are no subject
// anywhere in the file: a group must link only to nodes the export holds.
out.danglingGroupLinks = rows(`SELECT DISTINCT ?p ?o WHERE {
  GRAPH ?g { ?s ?p ?o }
  FILTER(STRENDS(STR(?g), "/groups") && isIRI(?o) && ?p != rdf:type)
  FILTER NOT EXISTS { { ?o ?p2 ?o2 } UNION { GRAPH ?h { ?o ?p2 ?o2 } } }
}`);
out.graphs = rows(`SELECT ?g (COUNT(*) AS ?n) WHERE { GRAPH ?g { ?s ?p ?o } } GROUP BY ?g ORDER BY ?g`);
console.log(JSON.stringify(out, null, 1));
