#!/usr/bin/env python3
"""Reads provgraph exports with parsers provgraph did not write, for
internal/export/interop_test.go. Debian's python3-rdflib, python3-pyld and
python3-prov. Every subcommand prints one JSON document on standard output;
a parse error is an exception and a non-zero exit.

  rdfcheck.py count FORMAT FILE           statements rdflib reads (nt, nq, ttl, jsonld)
  rdfcheck.py pyld-count FILE.jsonld      triples pyld's toRdf makes of a JSON-LD file
  rdfcheck.py isomorphic NT TTL JSONLD    rdflib.compare.isomorphic of the three graphs, and of pyld's toRdf
  rdfcheck.py literals FILE.nt            every literal's lexical form
  rdfcheck.py groups FILE.nt DIGEST       citation ids by comparison key under the policy, by SPARQL
  rdfcheck.py lineage FILE.nt             every citation's retrievals (hops in order, canonical
                                          declarations) and relations, by SPARQL
  rdfcheck.py prov FILE.nt                the PROV part read by the prov package, written as PROV-JSON
  rdfcheck.py prov-file FORMAT FILE       the whole file read by the prov package as a researcher
                                          would (ProvDocument.deserialize(source=FILE)), as PROV-JSON
"""

import json
import sys

import rdflib
from rdflib import RDF, Literal, URIRef
from rdflib.compare import isomorphic, to_isomorphic

# Keep every literal's lexical form as written: by default rdflib replaces
# "2025-01-01T00:00:00Z"^^xsd:dateTime with its canonical form.
rdflib.NORMALIZE_LITERALS = False

PG = "https://w3id.org/provgraph/ns#"
PROV = "http://www.w3.org/ns/prov#"
PREFIXES = """
PREFIX pg: <https://w3id.org/provgraph/ns#>
PREFIX prov: <http://www.w3.org/ns/prov#>
PREFIX xsd: <http://www.w3.org/2001/XMLSchema#>
"""

RDFLIB_FORMATS = {"nt": "nt", "nq": "nquads", "ttl": "turtle", "jsonld": "json-ld"}


def load(fmt, path):
    """Parses a file with rdflib's parser for its format (counts)."""
    if fmt == "nq":
        g = rdflib.ConjunctiveGraph()
    else:
        g = rdflib.Graph()
    g.parse(path, format=RDFLIB_FORMATS[fmt])
    return g


def load_exact(fmt, path):
    """Parses a file keeping every literal exact (values, isomorphism).

    rdflib before 6.2 (Debian bookworm has 6.1.1) unescapes an escaped
    backslash in N-Triples and N-Quads twice: "\\u0041" comes out as "A"
    (fixed by RDFLib/rdflib#1663). N-Triples is a subset of Turtle, so an
    N-Triples file is read with rdflib's Turtle parser, which is right.
    """
    if fmt == "nt":
        fmt = "ttl"
    return load(fmt, path)


def pyld_graph(path):
    from pyld import jsonld

    with open(path, encoding="utf-8") as f:
        doc = json.load(f)
    nq = jsonld.to_rdf(doc, {"format": "application/n-quads"})
    g = rdflib.Graph()
    g.parse(data=nq, format="turtle")  # N-Triples (no named graph): see load_exact
    return g


def cmd_count(fmt, path):
    return {"statements": len(load(fmt, path))}


def cmd_pyld_count(path):
    return {"statements": len(pyld_graph(path))}


def cmd_isomorphic(nt, ttl, jsonld):
    a, b, c = load_exact("nt", nt), load_exact("ttl", ttl), load_exact("jsonld", jsonld)
    p = pyld_graph(jsonld)
    out = {
        "nt": len(a),
        "ttl": len(b),
        "jsonld": len(c),
        "pyld": len(p),
        "nt_ttl": isomorphic(a, b),
        "nt_jsonld": isomorphic(a, c),
        "nt_pyld": isomorphic(a, p),
    }
    if not out["nt_jsonld"]:
        ia, ic = to_isomorphic(a), to_isomorphic(c)
        out["only_nt"] = sorted(str(t) for t in (ia - ic))[:10]
        out["only_jsonld"] = sorted(str(t) for t in (ic - ia))[:10]
    return out


def cmd_literals(path):
    g = load_exact("nt", path)
    return sorted({str(o) for o in g.objects() if isinstance(o, Literal)})


def cmd_groups(path, digest):
    g = load_exact("nt", path)
    q = PREFIXES + """
    SELECT ?id ?key ?code WHERE {
      ?pol pg:policyDigest ?digest .
      ?assoc prov:hadPlan ?pol .
      ?c pg:citationId ?id ; pg:normalizedAs ?n .
      ?n prov:qualifiedAssociation ?assoc .
      OPTIONAL { ?k prov:wasGeneratedBy ?n ; a pg:ComparisonKey ; pg:text ?key }
      OPTIONAL { ?n pg:errorCode ?code }
    }"""
    by_key, rejected = {}, []
    for row in g.query(q, initBindings={"digest": Literal(digest)}):
        if row.code is not None:
            rejected.append(str(row.id))
        else:
            by_key.setdefault(str(row.key), []).append(str(row.id))
    return {"by_key": {k: sorted(v) for k, v in by_key.items()}, "rejected": sorted(rejected)}


RELATION_TYPES = {
    PG + "FormatRelation": "format_of",
    PG + "MirrorRelation": "mirror_of",
    PG + "SyndicationRelation": "syndication_of",
    PG + "ArchiveRelation": "archive_of",
}


def cmd_lineage(path):
    g = load_exact("nt", path)
    out = {}

    def cit(i):
        return out.setdefault(str(i), {"retrievals": {}, "relations": []})

    def ret(i, r):
        return cit(i)["retrievals"].setdefault(str(r), {"hops": [], "canonical": []})

    # Hops in order: ORDER BY the xsd:integer value of pg:hopIndex.
    hops = PREFIXES + """
    SELECT ?id ?r ?idx ?from ?to ?status WHERE {
      ?c pg:citationId ?id ; pg:retrievedIn ?r .
      ?r pg:hop ?h .
      ?h pg:hopIndex ?idx ; pg:from ?from ; pg:to ?to ; pg:status ?status .
    } ORDER BY ?id ?r ?idx"""
    for row in g.query(hops):
        ret(row.id, row.r)["hops"].append(
            {"index": int(row.idx), "from": str(row["from"]), "to": str(row.to), "status": str(row.status)}
        )
    canon = PREFIXES + """
    SELECT ?id ?r ?url ?src WHERE {
      ?c pg:citationId ?id ; pg:retrievedIn ?r .
      ?d a pg:CanonicalDeclaration ; prov:wasGeneratedBy ?r ; pg:declaredURL ?url ; pg:signalSource ?src .
    } ORDER BY ?id ?r ?src ?url"""
    for row in g.query(canon):
        ret(row.id, row.r)["canonical"].append({"url": str(row.url), "source": str(row.src)})
    plain = PREFIXES + """
    SELECT ?id ?r WHERE { ?c pg:citationId ?id ; pg:retrievedIn ?r . }"""
    for row in g.query(plain):
        ret(row.id, row.r)
    rels = PREFIXES + """
    SELECT ?id ?cls ?target ?evidence ?format ?captured WHERE {
      ?c pg:citationId ?id ; pg:qualifiedRelation ?rel .
      ?rel a ?cls ; pg:target ?t ; pg:evidence ?evidence .
      ?t pg:text ?target .
      OPTIONAL { ?rel pg:format ?format }
      OPTIONAL { ?rel pg:capturedAt ?captured }
    }"""
    for row in g.query(rels):
        if str(row.cls) not in RELATION_TYPES:
            continue
        cit(row.id)["relations"].append(
            {
                "type": RELATION_TYPES[str(row.cls)],
                "target": str(row.target),
                "evidence": str(row.evidence),
                "format": "" if row.format is None else str(row.format),
                "captured_at": "" if row.captured is None else str(row.captured),
            }
        )
    for c in out.values():
        c["relations"].sort(key=lambda r: (r["type"], r["target"], r["evidence"]))
    return out


def cmd_prov(path):
    """The PROV part: every statement about a node that has a PROV class,
    whose predicate is a PROV term or rdf:type, or whose object is a literal
    or another such node. The prov package reads PROV-O RDF and writes
    PROV-JSON."""
    import prov.model as pm

    g = load_exact("nt", path)
    typed = {s for s, o in g.subject_objects(RDF.type) if str(o).startswith(PROV)}
    part = rdflib.Graph()
    for s, p, o in g:
        if s in typed and (str(p).startswith(PROV) or p == RDF.type or isinstance(o, Literal) or o in typed):
            part.add((s, p, o))
    doc = pm.ProvDocument.deserialize(content=part.serialize(format="nt"), format="rdf", rdf_format="nt")
    provjson = json.loads(doc.serialize(format="json"))
    counts = {k: len(v) for k, v in provjson.items() if k != "prefix"}
    base = {URIRef(PROV + c) for c in ("Entity", "Activity", "Agent")}
    base_nodes = {s for s, o in g.subject_objects(RDF.type) if o in base}
    return {
        "statements": len(g),
        "prov_part": len(part),
        "prov_nodes": len(typed),
        "base_nodes": len(base_nodes),
        "records": len(doc.records),
        "provjson": counts,
    }


PROV_RDF_FORMATS = {"nt": "nt", "nq": "nquads", "ttl": "turtle", "jsonld": "json-ld"}


def cmd_prov_file(fmt, path):
    """The whole file, read by the prov package from the file itself. Each
    node with a PROV base class (rdflib's reading) must be one record; in
    N-Quads a named graph is a bundle, whose records are counted too."""
    import prov.model as pm

    doc = pm.ProvDocument.deserialize(source=path, format="rdf", rdf_format=PROV_RDF_FORMATS[fmt])
    ids = set()
    for rec in doc.get_records():
        if rec.identifier is not None:
            ids.add(str(rec.identifier.uri))
    for b in doc.bundles:
        for rec in b.get_records():
            if rec.identifier is not None:
                ids.add(str(rec.identifier.uri))
    g = load(fmt, path)
    base = {URIRef(PROV + c) for c in ("Entity", "Activity", "Agent")}
    nodes = {str(s) for s, o in g.subject_objects(RDF.type) if o in base}
    provjson = json.loads(doc.serialize(format="json"))
    return {
        "statements": len(g),
        "base_nodes": len(nodes),
        "missing": sorted(nodes - ids)[:20],
        "bundles": len(doc.bundles),
        "records": len(doc.records) + sum(len(b.records) for b in doc.bundles),
        "provjson": {k: len(v) for k, v in provjson.items() if k != "prefix"},
    }


def main(argv):
    cmds = {
        "count": cmd_count,
        "pyld-count": cmd_pyld_count,
        "isomorphic": cmd_isomorphic,
        "literals": cmd_literals,
        "groups": cmd_groups,
        "lineage": cmd_lineage,
        "prov": cmd_prov,
        "prov-file": cmd_prov_file,
    }
    if len(argv) < 2 or argv[1] not in cmds:
        sys.exit(__doc__)
    json.dump(cmds[argv[1]](*argv[2:]), sys.stdout, ensure_ascii=False, indent=1, sort_keys=True)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main(sys.argv)
