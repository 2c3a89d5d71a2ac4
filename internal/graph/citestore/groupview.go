package citestore

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/provgraph/provgraph/internal/graph"
	"github.com/provgraph/provgraph/internal/model"
	"github.com/provgraph/provgraph/internal/normalize"
	"github.com/provgraph/provgraph/internal/store"
	"github.com/provgraph/provgraph/internal/vocab"
)

// The grouping view (graph format 7, FORMAT.md "Views"): per policy, the
// view bucket named by the policy's digest holds
//
//	complete      the marker: present once the view holds a row for every
//	              citation ("ingest TIME" or "rebuild TIME", when begun)
//	layout        "runs": rows and postings are graph.RunMaps (absent: a
//	              view of format 5, whose rows and postings are B-trees)
//	members       "1": each row ends with a member record (member.go;
//	              absent: a view of format 6 or 5, whose rows do not)
//	rows-count    the number of rows (uint64)
//	rows/         key 0x00 citation-id -> the row (encodeRow)
//	id/           group id (14 bytes) key -> ""
//	content/      str(content hash) key -> ""
//	digest/       str(text digest) key -> ""
//	sim/          block (1 byte) bits (2 bytes) key -> ""
//	redirect/     str(target key) source key -> ""
//	relation/     str(target key) source key -> ""
//
// where str(s) is uvarint(len(s)) then s. Postings are of keyed rows only
// and are the union over a key's rows: a key's postings are exactly what
// its rows give, under the policy's normalizer for the targets.
const (
	viewComplete  = "complete"
	viewRowsCount = "rows-count"
	subRows       = "rows"
	subID         = "id"
	subContent    = "content"
	subDigest     = "digest"
	subSim        = "sim"
	subRedirect   = "redirect"
	subRelation   = "relation"
)

// viewLayout is the key of a view bucket that names how its rows and
// postings are kept: layoutRuns for run maps (graph.RunMap, format 6:
// what a view made by this build holds); absent for nested B-trees, as
// format 5 kept them, which this build still reads and writes.
const (
	viewLayout = "layout"
	layoutRuns = "runs"
)

// A viewMap is a view's rows or one of its posting buckets: a
// *graph.RunMap, or a *graph.Bucket in a view of format 5.
type viewMap interface {
	Get(k []byte) []byte
	Put(k, v []byte) error
	Delete(k []byte) error
	Ascend(from []byte, fn func(k, v []byte) (bool, error)) error
	Prefix(p []byte, fn func(k, v []byte) (bool, error)) error
}

// openViewMap opens the rows or the posting bucket sub of the view bucket
// b, in its layout, creating it when create is set; nil when missing.
func openViewMap(b *graph.Bucket, sub string, create bool) (viewMap, error) {
	if string(b.Get([]byte(viewLayout))) == layoutRuns {
		m, err := b.Runs(sub, viewPrefixer(sub), create)
		if err != nil || m == nil {
			return nil, err
		}
		return m, nil
	}
	sb, err := b.Sub(sub, create)
	if err != nil || sb == nil {
		return nil, err
	}
	return sb, nil
}

// newViewLayout is the layout of a view begun by this build. A variable
// so that tests run the format 5 layout too ("").
var newViewLayout = layoutRuns

// newViewMembers says whether a view begun by this build keeps member
// records in its rows. A variable so that tests run views without them,
// as builds before version 7 made them.
var newViewMembers = true

// startLayout marks a view bucket being begun (holding no rows) as kept
// in run maps, with member records.
func startLayout(b *graph.Bucket) error {
	if rows, err := b.Sub(subRows, false); err != nil || rows != nil {
		return err // rows of an older view: it stays as it is
	}
	if b.Get([]byte(viewMembers)) == nil && newViewMembers {
		if err := b.Put([]byte(viewMembers), []byte("1")); err != nil {
			return err
		}
	}
	if b.Get([]byte(viewLayout)) != nil || newViewLayout == "" {
		return nil
	}
	return b.Put([]byte(viewLayout), []byte(newViewLayout))
}

// viewPrefixer returns the prefix of its keys that the run filters of
// map sub hold: what its reads ask for. For the rows, a key's rows (the
// key and its zero byte: KeyRows); for a posting, its value (the group
// id, str(hash), the SimHash block and bits: KeysOfID and the others).
// Stored with the runs: it must not change for a layout.
func viewPrefixer(sub string) graph.Prefixer {
	switch sub {
	case subRows:
		return func(k []byte) int {
			if i := bytes.IndexByte(k, 0); i >= 0 {
				return i + 1
			}
			return 0
		}
	case subID:
		return func(k []byte) int { return min(len(k), len("g-")+12) }
	case subSim:
		return func(k []byte) int { return min(len(k), 3) }
	default: // str(value) then the key
		return func(k []byte) int {
			n, w := binary.Uvarint(k)
			if w <= 0 || uint64(len(k)-w) < n {
				return 0
			}
			return w + int(n)
		}
	}
}

// postingSubs are the posting buckets, in the order check reports them.
var postingSubs = []string{subID, subContent, subDigest, subSim, subRedirect, subRelation}

// viewRowOf makes the row of citation c, read under its view's policy,
// with its member record (store.Listed) when members is set.
func viewRowOf(c *store.Citation, members bool) store.ViewRow {
	row := store.ViewRow{CitationID: c.ID, State: store.RowUnnormalized}
	if n := c.Norm; n != nil {
		switch {
		case n.Rejected():
			row.State = store.RowRejected
		case n.Key != "":
			row.State, row.Key = store.RowKeyed, n.Key
			row.KeyContent = n.Compare == string(normalize.CompareContent)
		}
	}
	row.Related = len(c.Relations) > 0
	for _, r := range c.Retrievals {
		if r.FinalURL != "" && len(r.Hops) > 0 {
			row.Related = true
			if !r.CrossesHost() {
				row.Redirects = append(row.Redirects, r.FinalURL)
			}
		}
		if len(r.Canonicals) > 0 {
			row.Related = true
		}
		if !r.Successful() {
			continue
		}
		e := store.ViewEvidence{Retrieval: r.Node, Content: r.ContentHash}
		if x := r.Current(); x != nil {
			e.Digest = x.TextDigest
			if x.SimHash != "" {
				if v, err := strconv.ParseUint(x.SimHash, 16, 64); err == nil {
					e.SimHash, e.HasSim = v, true
				}
			}
		}
		row.Evidence = append(row.Evidence, e)
	}
	row.Links = store.Links(c)
	if members {
		row.Member = store.Listed(c)
	}
	slices.Sort(row.Redirects)
	row.Redirects = slices.Compact(row.Redirects)
	slices.SortFunc(row.Evidence, store.CompareViewEvidence)
	return row
}

func appendStr(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

func readStr(b []byte) (string, []byte, error) {
	n, k := binary.Uvarint(b)
	if k <= 0 || uint64(len(b)-k) < n {
		return "", nil, errors.New("a text runs past the end of the row")
	}
	return string(b[k : k+int(n)]), b[k+int(n):], nil
}

// Evidence texts are mostly a minted retrieval IRI and "sha256:" and 64
// hex digits: appendText stores those as their bytes, half their size,
// behind a tag (0: str(s); 1: the 16 bytes of a minted retrieval IRI's
// hex; 2: the 32 bytes of a SHA-256 text's hex), and readText gives back
// exactly the text.
var retrievalPrefix = model.IDBase + "retrieval/"

const sha256Prefix = "sha256:"

func appendText(b []byte, s string) []byte {
	for _, f := range []struct {
		tag    byte
		prefix string
		n      int
	}{{1, retrievalPrefix, 16}, {2, sha256Prefix, 32}} {
		if rest, ok := strings.CutPrefix(s, f.prefix); ok && len(rest) == 2*f.n && lowerHex(rest) {
			b = append(b, f.tag)
			b, _ = hex.AppendDecode(b, []byte(rest)) // checked: lowercase hex
			return b
		}
	}
	return appendStr(append(b, 0), s)
}

func lowerHex(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

func readText(b []byte) (string, []byte, error) {
	if len(b) == 0 {
		return "", nil, errors.New("a text runs past the end of the row")
	}
	prefix, n := "", 0
	switch b[0] {
	case 0:
		return readStr(b[1:])
	case 1:
		prefix, n = retrievalPrefix, 16
	case 2:
		prefix, n = sha256Prefix, 32
	default:
		return "", nil, fmt.Errorf("a text has tag %d", b[0])
	}
	if len(b) < 1+n {
		return "", nil, errors.New("a text runs past the end of the row")
	}
	return prefix + hex.EncodeToString(b[1:1+n]), b[1+n:], nil
}

// rowKey is the key of a row: its key, 0x00, its citation id. Keys hold
// no 0x00 (a normalized URL percent-encodes it), so byte order is key
// order, then id order.
func rowKey(key, id string) []byte {
	b := make([]byte, 0, len(key)+1+len(id))
	b = append(b, key...)
	b = append(b, 0)
	return append(b, id...)
}

func splitRowKey(k []byte) (key, id string, ok bool) {
	i := bytes.IndexByte(k, 0)
	if i < 0 {
		return "", "", false
	}
	return string(k[:i]), string(k[i+1:]), true
}

// encodeRow writes a row's value: state, flags, redirects, links and
// evidence, texts as str, then its member record when it has one
// (appendMember).
func encodeRow(r store.ViewRow) []byte {
	var flags byte
	if r.KeyContent {
		flags |= 1
	}
	if r.Related {
		flags |= 2
	}
	b := []byte{byte(r.State), flags}
	b = binary.AppendUvarint(b, uint64(len(r.Redirects)))
	for _, s := range r.Redirects {
		b = appendStr(b, s)
	}
	b = binary.AppendUvarint(b, uint64(len(r.Links)))
	for _, s := range r.Links {
		b = appendStr(b, s)
	}
	b = binary.AppendUvarint(b, uint64(len(r.Evidence)))
	for _, e := range r.Evidence {
		b = appendText(b, e.Retrieval)
		b = appendText(b, e.Content)
		b = appendText(b, e.Digest)
		if e.HasSim {
			b = append(b, 1)
			b = binary.BigEndian.AppendUint64(b, e.SimHash)
		} else {
			b = append(b, 0)
		}
	}
	if r.Member != nil {
		b = appendMember(b, r.Member)
	}
	return b
}

// decodeRow reads a row written by encodeRow under row key k. The
// normalization of its member record, if any, has no Policy: a reader
// sets the view's.
func decodeRow(k, v []byte) (store.ViewRow, error) {
	var r store.ViewRow
	key, id, ok := splitRowKey(k)
	if !ok {
		return r, fmt.Errorf("row key %q has no 0x00 between key and citation id", k)
	}
	r.Key, r.CitationID = key, id
	bad := func(what string) (store.ViewRow, error) {
		return r, fmt.Errorf("row %q (citation %s): %s", key, id, what)
	}
	if len(v) < 2 || v[0] > byte(store.RowUnnormalized) {
		return bad("state unreadable")
	}
	r.State, r.KeyContent, r.Related = store.RowState(v[0]), v[1]&1 != 0, v[1]&2 != 0
	v = v[2:]
	list := func() ([]string, error) {
		n, k := binary.Uvarint(v)
		if k <= 0 || n > uint64(len(v)) {
			return nil, errors.New("a count is unreadable")
		}
		v = v[k:]
		var out []string
		for range n {
			s, rest, err := readStr(v)
			if err != nil {
				return nil, err
			}
			out, v = append(out, s), rest
		}
		return out, nil
	}
	var err error
	if r.Redirects, err = list(); err != nil {
		return bad(err.Error())
	}
	if r.Links, err = list(); err != nil {
		return bad(err.Error())
	}
	n, c := binary.Uvarint(v)
	if c <= 0 || n > uint64(len(v)) {
		return bad("the evidence count is unreadable")
	}
	v = v[c:]
	for range n {
		var e store.ViewEvidence
		for _, dst := range []*string{&e.Retrieval, &e.Content, &e.Digest} {
			if *dst, v, err = readText(v); err != nil {
				return bad(err.Error())
			}
		}
		switch {
		case len(v) >= 9 && v[0] == 1:
			e.HasSim, e.SimHash = true, binary.BigEndian.Uint64(v[1:9])
			v = v[9:]
		case len(v) >= 1 && v[0] == 0:
			v = v[1:]
		default:
			return bad("a SimHash is unreadable")
		}
		r.Evidence = append(r.Evidence, e)
	}
	if len(v) > 0 && v[0] == 1 {
		if r.Member, v, err = decodeMember(v[1:], id, r.Key, nil); err != nil {
			return bad(err.Error())
		}
	}
	if len(v) != 0 {
		return bad("bytes after the evidence")
	}
	return r, nil
}

// GroupID is the id grouping gives the group whose smallest key is key
// (query.groupID): "g-" and the hex of the first 6 bytes of its SHA-256.
func GroupID(key string) string {
	sum := sha256.Sum256([]byte(key))
	return "g-" + hex.EncodeToString(sum[:6])
}

// posting is one entry of a posting bucket.
type posting struct {
	sub string
	key string // the entry's key, as bytes
}

// keyOfFunc gives the key of a URL under a view's policy, "" for one the
// policy rejects: grouping's keyOf, from the policy's stored text (exact
// text when it does not parse, as grouping falls back to).
type keyOfFunc func(string) string

func policyKeyOf(pol store.PolicyRef) keyOfFunc {
	keyOfs.Lock()
	defer keyOfs.Unlock()
	if f, ok := keyOfs.m[pol.Digest]; ok {
		return f
	}
	f := newKeyOf(pol)
	if keyOfs.m == nil || len(keyOfs.m) > 64 {
		keyOfs.m = map[string]keyOfFunc{}
	}
	keyOfs.m[pol.Digest] = f
	return f
}

// keyOfs caches a keyOfFunc by policy digest: every batch of an ingest
// asks for its policy's.
var keyOfs struct {
	sync.Mutex
	m map[string]keyOfFunc
}

func newKeyOf(pol store.PolicyRef) keyOfFunc {
	if pol.Text == "" {
		return func(u string) string { return u }
	}
	p, err := normalize.ParsePolicy([]byte(pol.Text), "database:"+pol.String())
	if err != nil {
		return func(u string) string { return u }
	}
	n, err := normalize.New(p, nil)
	if err != nil {
		return func(u string) string { return u }
	}
	return func(u string) string {
		res, err := n.Normalize(u)
		if err != nil {
			return ""
		}
		return res.Key
	}
}

// postingsOf appends the postings of a keyed row.
func postingsOf(dst []posting, r store.ViewRow, keyOf keyOfFunc) []posting {
	if r.State != store.RowKeyed {
		return dst
	}
	add := func(sub string, prefix []byte) {
		dst = append(dst, posting{sub, string(prefix) + r.Key})
	}
	add(subID, []byte(GroupID(r.Key)))
	for _, e := range r.Evidence {
		if e.Content != "" {
			add(subContent, appendStr(nil, e.Content))
		}
		if e.Digest != "" {
			add(subDigest, appendStr(nil, e.Digest))
		}
		if e.HasSim {
			for blk := range 4 {
				add(subSim, []byte{byte(blk), byte(e.SimHash >> (16*blk + 8)), byte(e.SimHash >> (16 * blk))})
			}
		}
	}
	for _, u := range r.Redirects {
		if t := keyOf(u); t != "" && t != r.Key {
			add(subRedirect, appendStr(nil, t))
		}
	}
	for _, u := range r.Links {
		if t := keyOf(u); t != "" && t != r.Key {
			add(subRelation, appendStr(nil, t))
		}
	}
	return dst
}

// viewWriter writes rows into one policy's view in a write transaction.
type viewWriter struct {
	b    *graph.Bucket
	rows viewMap
	subs map[string]viewMap
	runs bool // rows and postings are run maps (layout "runs")
	// members: the rows carry member records (viewMembers)
	members bool
	pol     store.PolicyRef
	keyOf   keyOfFunc
	rd      *Reader
	primed  bool // rd has read the policies (write)
	count   uint64
	// changed holds, per key whose rows changed (rather than grew), the
	// old values of its changed rows by citation id: its postings are
	// recomputed once the batch's rows are written.
	changed map[string]map[string][]byte
	// dirty holds the keys whose rows the batch added or changed: finish
	// records them in the view's group records (markDirty).
	dirty map[string]bool
}

func newViewWriter(ctx context.Context, w *graph.Writer, b *graph.Bucket, pol store.PolicyRef, keyOf keyOfFunc) (*viewWriter, error) {
	gr, err := w.Reader()
	if err != nil {
		return nil, err
	}
	vw := &viewWriter{b: b, pol: pol, keyOf: keyOf, subs: map[string]viewMap{}, changed: map[string]map[string][]byte{}, dirty: map[string]bool{}}
	if vw.rows, err = openViewMap(b, subRows, true); err != nil {
		return nil, err
	}
	for _, s := range postingSubs {
		if vw.subs[s], err = openViewMap(b, s, true); err != nil {
			return nil, err
		}
	}
	_, vw.runs = vw.rows.(*graph.RunMap)
	vw.members = hasMembers(b)
	if c := b.Get([]byte(viewRowsCount)); len(c) == 8 {
		vw.count = binary.BigEndian.Uint64(c)
	}
	vw.rd = NewReader(ctx, gr)
	return vw, nil
}

// readRow reads the row of the citation node n from the quads, under
// pol: false if n is not a citation. It reads the citation lean
// (Reader.Member), which holds everything a row is made of
// (TestLeanRowIsWholeRow) and skips the answer, the step log and the
// passage checks, the costliest parts of a whole citation for a pass over
// every citation (a rebuild, check).
//
// With members set (a view whose rows carry member records), it reads the
// citation as a listing shows it (Reader.Shown), which holds what the row
// and its record are made of.
func readRow(rd *Reader, n string, pol store.PolicyRef, members bool) (store.ViewRow, bool, error) {
	read := rd.Member
	if members {
		read = rd.Shown
	}
	c, err := read(n, pol)
	if err != nil || c.ID == "" {
		return store.ViewRow{}, false, err
	}
	return viewRowOf(c, members), true, nil
}

// write writes the row of the citation node n, read from the quads.
func (vw *viewWriter) write(n string) error {
	if !vw.primed {
		// The reader names the policies a citation was normalized under
		// from its list of them, read once: most batches read no row
		// back and need none.
		if _, err := vw.rd.Policies(); err != nil {
			return err
		}
		vw.primed = true
	}
	row, ok, err := readRow(vw.rd, n, vw.pol, vw.members)
	if err != nil || !ok {
		return err // or not a citation
	}
	k, v := rowKey(row.Key, row.CitationID), encodeRow(row)
	old := vw.rows.Get(k)
	if bytes.Equal(old, v) {
		return nil
	}
	if row.Key != "" {
		vw.dirty[row.Key] = true
		// Renormalized since: its unnormalized row goes.
		uk := rowKey("", row.CitationID)
		if vw.rows.Get(uk) != nil {
			if err := vw.rows.Delete(uk); err != nil {
				return err
			}
			vw.count--
		}
	}
	if old != nil {
		m := vw.changed[row.Key]
		if m == nil {
			m = map[string][]byte{}
			vw.changed[row.Key] = m
		}
		if _, ok := m[row.CitationID]; !ok {
			m[row.CitationID] = slices.Clone(old)
		}
	} else {
		vw.count++
	}
	if err := vw.rows.Put(k, v); err != nil {
		return err
	}
	if old == nil {
		for _, p := range postingsOf(nil, row, vw.keyOf) {
			if err := vw.put(p); err != nil {
				return err
			}
		}
	}
	return nil
}

// put writes posting p. Into a B-tree only when missing, sparing its
// page a rewrite; into a run map always, as its Get would seek in every
// run that may hold the value, and a repeat costs one entry until a merge.
func (vw *viewWriter) put(p posting) error {
	b := vw.subs[p.sub]
	if !vw.runs && b.Get([]byte(p.key)) != nil {
		return nil
	}
	return b.Put([]byte(p.key), nil)
}

// keyPostings returns the postings of the rows of key, with the rows in
// old (by citation id) taken as they were.
func (vw *viewWriter) keyPostings(key string, old map[string][]byte) (map[posting]bool, error) {
	set := map[posting]bool{}
	err := vw.rows.Prefix(rowKey(key, ""), func(k, v []byte) (bool, error) {
		_, id, _ := splitRowKey(k)
		if o, ok := old[id]; ok {
			v = o
		}
		r, err := decodeRow(k, v)
		if err != nil {
			return false, err
		}
		for _, p := range postingsOf(nil, r, vw.keyOf) {
			set[p] = true
		}
		return true, nil
	})
	return set, err
}

// finish rewrites the postings of the keys whose rows changed, and the
// row count.
func (vw *viewWriter) finish() error {
	keys := make([]string, 0, len(vw.changed))
	for k := range vw.changed {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, key := range keys {
		before, err := vw.keyPostings(key, vw.changed[key])
		if err != nil {
			return err
		}
		after, err := vw.keyPostings(key, nil)
		if err != nil {
			return err
		}
		for p := range before {
			if !after[p] {
				if err := vw.subs[p.sub].Delete([]byte(p.key)); err != nil {
					return err
				}
			}
		}
		for p := range after {
			if !before[p] {
				if err := vw.put(p); err != nil {
					return err
				}
			}
		}
	}
	if err := markDirty(vw.b, vw.dirty); err != nil {
		return err
	}
	return vw.b.Put([]byte(viewRowsCount), binary.BigEndian.AppendUint64(nil, vw.count))
}

// policyOf returns the stored policy with digest d.
func policyOf(rd *Reader, d string) (store.PolicyRef, bool, error) {
	pols, err := rd.Policies()
	if err != nil {
		return store.PolicyRef{}, false, err
	}
	for _, p := range pols {
		if p.Digest == d {
			return p, true, nil
		}
	}
	return store.PolicyRef{}, false, nil
}

// WriteViewRows writes, in the write transaction of w, the rows (and
// postings) of the citation nodes cits into every complete view: the
// rows of citations a batch added, or of those whose evidence it changed.
// A row already stored as the quads now say is left as it is, so a
// batch written again writes nothing.
func WriteViewRows(ctx context.Context, w *graph.Writer, cits []graph.Term) error {
	if len(cits) == 0 {
		return nil
	}
	for _, name := range w.Views() {
		b := w.View(name)
		if b.Get([]byte(viewComplete)) == nil {
			continue // an interrupted rebuild: not a view until rebuilt
		}
		if err := writeRows(ctx, w, b, name, cits); err != nil {
			return fmt.Errorf("view of policy %s: %w", name, err)
		}
	}
	return nil
}

// WritePolicyViewRows is WriteViewRows for the view of the policy with
// digest d alone (if it is complete): renormalize changes no other.
func WritePolicyViewRows(ctx context.Context, w *graph.Writer, d string, cits []graph.Term) error {
	b := w.View(d)
	if b == nil || b.Get([]byte(viewComplete)) == nil || len(cits) == 0 {
		return nil
	}
	if err := writeRows(ctx, w, b, d, cits); err != nil {
		return fmt.Errorf("view of policy %s: %w", d, err)
	}
	return nil
}

func writeRows(ctx context.Context, w *graph.Writer, b *graph.Bucket, digest string, cits []graph.Term) error {
	gr, err := w.Reader()
	if err != nil {
		return err
	}
	pol, ok, err := policyOf(NewReader(ctx, gr), digest)
	if err != nil || !ok {
		return err // a view of a policy not stored is left to check
	}
	vw, err := newViewWriter(ctx, w, b, pol, policyKeyOf(pol))
	if err != nil {
		return err
	}
	for i, c := range cits {
		if i%1024 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		if err := vw.write(c.Value); err != nil {
			return err
		}
	}
	return vw.finish()
}

// StartView starts, in the write transaction of w, a complete and empty
// view of the policy with digest d: for a database that holds no
// citation yet, whose first batch is then written into it.
func StartView(w *graph.Writer, d string, now time.Time) error {
	b, err := w.CreateView(d)
	if err != nil {
		return err
	}
	if b.Get([]byte(viewComplete)) != nil {
		return nil
	}
	if err := startLayout(b); err != nil {
		return err
	}
	if err := b.Put([]byte(viewRowsCount), make([]byte, 8)); err != nil {
		return err
	}
	return b.Put([]byte(viewComplete), []byte("ingest "+now.UTC().Format(time.RFC3339)))
}

// citationClass is the IRI of pg:Citation.
var citationClass = graph.IRI(vocab.Citation)

// RetrievalCitations returns the citations retrieved in the retrieval
// node ret, on the write transaction of w: those whose rows its new
// evidence changes.
func RetrievalCitations(ctx context.Context, w *graph.Writer, ret graph.Term) ([]graph.Term, error) {
	gr, err := w.Reader()
	if err != nil {
		return nil, err
	}
	var out []graph.Term
	err = gr.Match(ctx, graph.Quad{P: iri(vocab.RetrievedIn), O: ret}, func(q graph.Quad) error {
		out = append(out, q.S)
		return nil
	})
	return out, err
}

// CitationCount returns how many citations the database holds: the rows
// of a complete view when it keeps one (of any policy: a view has a row
// per citation), else the instances of pg:Citation counted in the POS
// index (a pass over 4 bytes a citation, about a second at ten million).
func (s *Store) CitationCount(ctx context.Context) (int64, error) {
	infos, err := s.Views(ctx)
	if err != nil {
		return 0, err
	}
	for _, v := range infos {
		if v.Complete {
			return v.Rows, nil
		}
	}
	var n int64
	err = s.within(func(r *graph.Reader) error {
		typ, cls := r.ID(iri(vocab.RDFType)), r.ID(citationClass)
		if typ == 0 || cls == 0 {
			return nil
		}
		return r.Subjects(ctx, typ, cls, func(graph.ID) { n++ })
	})
	return n, err
}

// DistinctURLs counts the distinct raw URLs of the citations and the
// distinct final URLs of their retrievals, as a scan's handles would
// (query.DistinctURLs), by one pass each over the POS index in object
// order: the objects of pg:cites (a raw URL's node is named by its exact
// text, so one node is one raw URL) and the non-empty literals of
// pg:finalURL. Nothing is held but the last object: at ten million
// citations a scan of the two fields holds about 2.8 GB.
func (s *Store) DistinctURLs(ctx context.Context) (raw, final int, err error) {
	err = s.within(func(r *graph.Reader) error {
		count := func(pred graph.ID, skip ...graph.ID) (int, error) {
			n, last := 0, graph.ID(0)
			err := r.Pairs(ctx, pred, func(_, o graph.ID) {
				if o != last && !slices.Contains(skip, o) {
					n++
				}
				last = o
			})
			return n, err
		}
		var err error
		if raw, err = count(r.ID(iri(vocab.Cites))); err != nil {
			return err
		}
		var empty []graph.ID
		for _, t := range []graph.Term{graph.String(""), graph.Literal("", "")} {
			if id := r.ID(t); id != 0 {
				empty = append(empty, id)
			}
		}
		final, err = count(r.ID(iri(vocab.FinalURL)), empty...)
		return err
	})
	return raw, final, err
}

// DefaultRebuildBatch is how many citations a view rebuild writes per
// transaction.
const DefaultRebuildBatch = 20000

// ErrNoPolicy is returned (wrapped) by RebuildView for a policy the
// database does not hold.
var ErrNoPolicy = errors.New("the database holds no such policy")

// RebuildView drops the view of the policy with digest d and writes it
// again from the quads, batch citations per transaction (0:
// DefaultRebuildBatch), the marker last: an interrupted rebuild leaves no
// view, only rows that the next rebuild drops. progress, when set, is
// called after each batch. Its batches, in citation order, each write a
// run that spans every key: CompactView then merges them.
//
// The rows are made as the check of a view makes them (rowsAt): the
// citations read in id order in read transactions, their quads and terms
// by pread, a window of term ids at a time, and not by point reads in the
// write transaction, whose every first touch of a page is a fault (a
// tenth of the cost, bench/pagecost). One goroutine makes the next
// batch's rows while the caller's writes the last. Its memory is two
// batches of rows, the term id of every citation (4 bytes each) and the
// mapped pages of the file, kept under rebuildMapped.
func (s *Store) RebuildView(ctx context.Context, d string, batch int, progress func(done, total int)) (int64, error) {
	if batch <= 0 {
		batch = DefaultRebuildBatch
	}
	var ids []graph.ID
	var pol store.PolicyRef
	var known bool
	err := s.g.Read(func(r *graph.Reader) error {
		var err error
		pol, known, err = policyOf(NewReader(ctx, r), d)
		if err != nil || !known {
			return err
		}
		typ, cls := r.ID(iri(vocab.RDFType)), r.ID(citationClass)
		if typ == 0 || cls == 0 {
			return nil
		}
		return r.Subjects(ctx, typ, cls, func(id graph.ID) {
			if ids = append(ids, id); len(ids)%viewCheckBatch == 0 {
				r.LimitMapped(rebuildMapped / 4)
			}
		})
	})
	if err != nil {
		return 0, err
	}
	if !known {
		return 0, fmt.Errorf("rebuild view: policy %s: %w", d, ErrNoPolicy)
	}
	begun := time.Now().UTC().Format(time.RFC3339)
	var members bool
	err = s.g.Update(func(w *graph.Writer) error {
		if err := w.DropView(d); err != nil {
			return err
		}
		b, err := w.CreateView(d)
		if err != nil {
			return err
		}
		if err := startLayout(b); err != nil {
			return err
		}
		members = hasMembers(b)
		return b.Put([]byte(viewRowsCount), make([]byte, 8))
	})
	if err != nil {
		return 0, err
	}
	// The writes only add pages past those the reads read, but a write
	// that grows the file remaps it, which waits for every read
	// transaction to end: the reader holds one per batch and sends the
	// rows after it has ended.
	type made struct {
		rows []store.ViewRow
		done int
		err  error
	}
	readCtx, cancel := context.WithCancel(ctx)
	batches := make(chan made, 1)
	var reading sync.WaitGroup
	defer func() {
		cancel()
		reading.Wait()
	}()
	reading.Go(func() {
		defer close(batches)
		for lo := 0; lo < len(ids); lo += batch {
			hi := min(lo+batch, len(ids))
			m := made{rows: make([]store.ViewRow, 0, hi-lo), done: hi}
			m.err = s.g.Read(func(r *graph.Reader) error {
				next := lo
				take := func() (int, int, bool) {
					a := next
					next += viewCheckBatch
					return a, min(a+viewCheckBatch, hi), a < hi
				}
				return rowsAt(readCtx, r, pol, members, ids, take, rebuildMapped, func(row store.ViewRow) {
					m.rows = append(m.rows, row)
				})
			})
			select {
			case batches <- m:
			case <-readCtx.Done():
				return
			}
			if m.err != nil {
				return
			}
		}
	})
	for m := range batches {
		if m.err != nil {
			return 0, fmt.Errorf("rebuild view: %w", m.err)
		}
		if err := ctx.Err(); err != nil {
			return 0, err // the batch read before the stop is not written
		}
		err := s.g.Update(func(w *graph.Writer) error {
			vw, err := newViewWriter(ctx, w, w.View(d), pol, policyKeyOf(pol))
			if err != nil {
				return err
			}
			if err := vw.writeNew(m.rows); err != nil {
				return err
			}
			return vw.finish()
		})
		if err != nil {
			return 0, fmt.Errorf("rebuild view: %w", err)
		}
		if progress != nil {
			progress(m.done, len(ids))
		}
	}
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	var rows int64
	err = s.g.Update(func(w *graph.Writer) error {
		b := w.View(d)
		if c := b.Get([]byte(viewRowsCount)); len(c) == 8 {
			rows = int64(binary.BigEndian.Uint64(c))
		}
		return b.Put([]byte(viewComplete), []byte("rebuild "+begun))
	})
	return rows, err
}

// rebuildMapped is how much of the file a rebuild's reads keep mapped
// (rowsAt): as a check's, whose reads they are.
const rebuildMapped = viewCheckMapped

// Views describes every view the database holds, complete or not, by
// policy digest.
func (s *Store) Views(ctx context.Context) ([]store.ViewInfo, error) {
	var out []store.ViewInfo
	err := s.within(func(r *graph.Reader) error {
		rd := NewReader(ctx, r)
		for _, name := range r.Views() {
			b := r.View(name)
			pol, ok, err := policyOf(rd, name)
			if err != nil {
				return err
			}
			if !ok {
				pol.Digest = name
			}
			info := store.ViewInfo{Policy: pol}
			if m := b.Get([]byte(viewComplete)); m != nil {
				info.Complete, info.Built = true, string(m)
			}
			if c := b.Get([]byte(viewRowsCount)); len(c) == 8 {
				info.Rows = int64(binary.BigEndian.Uint64(c))
			}
			info.Members = hasMembers(b)
			info.Layout = "B-trees"
			if string(b.Get([]byte(viewLayout))) == layoutRuns {
				info.Layout = "sorted runs"
				m, err := b.Runs(subRows, nil, false)
				if err != nil {
					return err
				}
				if m != nil {
					info.RowRuns, info.RowRunsToMerge = m.Runs(), m.RunsToMerge()
				}
			}
			out = append(out, info)
		}
		return nil
	})
	return out, err
}

var _ store.GroupView = (*Store)(nil)

// viewRead runs fn with the complete view of policy d, or fails with
// store.ErrNoView.
func (s *Store) viewRead(ctx context.Context, d string, fn func(b *graph.Bucket) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.passRead()
	return s.within(func(r *graph.Reader) error {
		b := r.View(d)
		if b == nil || b.Get([]byte(viewComplete)) == nil {
			return fmt.Errorf("policy %s: %w", d, store.ErrNoView)
		}
		return fn(b)
	})
}

// HasView implements store.GroupView.
func (s *Store) HasView(ctx context.Context, d string) (bool, error) {
	err := s.viewRead(ctx, d, func(*graph.Bucket) error { return nil })
	if errors.Is(err, store.ErrNoView) {
		return false, nil
	}
	return err == nil, err
}

// readMap opens the map sub of the view bucket b of policy d for reading:
// once per read transaction when s reads on one (Within, View).
func (s *Store) readMap(d string, b *graph.Bucket, sub string) (viewMap, error) {
	if s.r == nil {
		return openViewMap(b, sub, false)
	}
	id := d + "\x00" + sub
	if m, ok := s.maps[id]; ok {
		return m, nil
	}
	m, err := openViewMap(b, sub, false)
	if err != nil {
		return nil, err
	}
	if s.maps == nil {
		s.maps = map[string]viewMap{}
	}
	s.maps[id] = m
	return m, nil
}

// KeyRows implements store.GroupView.
func (s *Store) KeyRows(ctx context.Context, d, key string) ([]store.ViewRow, error) {
	if key == "" {
		return nil, nil
	}
	var out []store.ViewRow
	err := s.viewRead(ctx, d, func(b *graph.Bucket) error {
		rows, err := s.readMap(d, b, subRows)
		if err != nil || rows == nil {
			return err
		}
		return rows.Prefix(rowKey(key, ""), func(k, v []byte) (bool, error) {
			r, err := decodeRow(k, v)
			if err != nil {
				return false, viewDamage(d, err)
			}
			out = append(out, r)
			return true, nil
		})
	})
	return out, err
}

// viewDamage is an error wrapping graph.ErrCorrupt for a view entry that
// does not decode.
func viewDamage(d string, err error) error {
	return fmt.Errorf("%w: view of policy %s: %v (run provgraph view rebuild)", graph.ErrCorrupt, d, err)
}

// RowsAfter implements store.GroupView.
func (s *Store) RowsAfter(ctx context.Context, d string, after *store.RowPos, limit int) ([]store.ViewRow, error) {
	var out []store.ViewRow
	err := s.viewRead(ctx, d, func(b *graph.Bucket) error {
		rows, err := s.readMap(d, b, subRows)
		if err != nil || rows == nil {
			return err
		}
		var from, skip []byte
		if after != nil {
			from = rowKey(after.Key, after.CitationID)
			skip = from
		}
		return rows.Ascend(from, func(k, v []byte) (bool, error) {
			if skip != nil && bytes.Equal(k, skip) {
				return true, nil
			}
			if limit > 0 && len(out) >= limit {
				return false, nil
			}
			r, err := decodeRow(k, v)
			if err != nil {
				return false, viewDamage(d, err)
			}
			out = append(out, r)
			return true, nil
		})
	})
	return out, err
}

// keysWith returns the keys after prefix in posting bucket sub.
func (s *Store) keysWith(ctx context.Context, d, sub string, prefix []byte) ([]string, error) {
	var out []string
	err := s.viewRead(ctx, d, func(b *graph.Bucket) error {
		p, err := s.readMap(d, b, sub)
		if err != nil || p == nil {
			return err
		}
		return p.Prefix(prefix, func(k, _ []byte) (bool, error) {
			out = append(out, string(k[len(prefix):]))
			return true, nil
		})
	})
	return out, err
}

// KeysOfID implements store.GroupView.
func (s *Store) KeysOfID(ctx context.Context, d, id string) ([]string, error) {
	if len(id) != len("g-")+12 {
		return nil, s.viewRead(ctx, d, func(*graph.Bucket) error { return nil })
	}
	return s.keysWith(ctx, d, subID, []byte(id))
}

// KeysByContent implements store.GroupView.
func (s *Store) KeysByContent(ctx context.Context, d, hash string) ([]string, error) {
	return s.keysWith(ctx, d, subContent, appendStr(nil, hash))
}

// KeysByDigest implements store.GroupView.
func (s *Store) KeysByDigest(ctx context.Context, d, digest string) ([]string, error) {
	return s.keysWith(ctx, d, subDigest, appendStr(nil, digest))
}

// KeysBySimBlock implements store.GroupView.
func (s *Store) KeysBySimBlock(ctx context.Context, d string, block int, bits uint16) ([]string, error) {
	if block < 0 || block > 3 {
		return nil, fmt.Errorf("simhash block %d: want 0 to 3", block)
	}
	return s.keysWith(ctx, d, subSim, []byte{byte(block), byte(bits >> 8), byte(bits)})
}

// RedirectSources implements store.GroupView.
func (s *Store) RedirectSources(ctx context.Context, d, target string) ([]string, error) {
	return s.keysWith(ctx, d, subRedirect, appendStr(nil, target))
}

// RelationSources implements store.GroupView.
func (s *Store) RelationSources(ctx context.Context, d, target string) ([]string, error) {
	return s.keysWith(ctx, d, subRelation, appendStr(nil, target))
}

// DumpView lists every entry of the view of the policy with digest d,
// one line each ("bucket key value" in hex), in bucket then key order,
// without the marker's time: two views with the same dump hold the same
// bytes. Tests compare views with it; nil when there is no view.
func DumpView(r *graph.Reader, d string) ([]string, error) {
	b := r.View(d)
	if b == nil {
		return nil, nil
	}
	var out []string
	if b.Get([]byte(viewComplete)) != nil {
		out = append(out, "complete")
	}
	out = append(out, fmt.Sprintf("%s %x", viewRowsCount, b.Get([]byte(viewRowsCount))))
	for _, sub := range append([]string{subRows}, postingSubs...) {
		sb, err := openViewMap(b, sub, false)
		if err != nil || sb == nil {
			out = append(out, sub+" (none)")
			continue
		}
		err = sb.Ascend(nil, func(k, v []byte) (bool, error) {
			out = append(out, fmt.Sprintf("%s %x %x", sub, k, v))
			return true, nil
		})
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// WriteNewViewRows writes, in the write transaction of w, into every
// complete view, the rows (and postings) of the citations the batch
// added, from what the mapper made of their records (Citation.Row) for
// the policy with digest d, and as unnormalized for another view's
// policy. A citation the batch did not add (stored before) is left as
// its view holds it; one whose retrieval node was stored before (two
// records with the same retrieval, which resolve or extract may have
// given evidence since) is read back from the quads instead. A loader
// that writes many batches uses a NewRows instead.
func WriteNewViewRows(ctx context.Context, w *graph.Writer, d string, cits []Citation) error {
	var nr NewRows
	return nr.Write(ctx, w, d, cits)
}

// NewRows is WriteNewViewRows for the batches of one loader, one write
// transaction each, on one goroutine. It keeps from one batch to the next
// the policies it found by digest: a policy's node, name, version and
// digest are written once and never changed (the store only grows), and
// finding them again (a pass over every policy and every ingest run of
// the database) was 3 % of the CPU of a late batch of a 10M ingest, all
// of it on the goroutine that writes. A policy not found is looked for
// again by the next batch. The zero NewRows is ready to use.
type NewRows struct {
	pols map[string]store.PolicyRef // by digest; LastRun left zero
}

// policy returns the stored policy with digest d, from the batches before
// or from rd.
func (nr *NewRows) policy(rd *Reader, d string) (store.PolicyRef, bool, error) {
	if p, ok := nr.pols[d]; ok {
		return p, true, nil
	}
	p, ok, err := policyOf(rd, d)
	if err != nil || !ok {
		return p, ok, err
	}
	// LastRun changes with every run, and a row does not hold it.
	p.LastRun = time.Time{}
	if nr.pols == nil {
		nr.pols = map[string]store.PolicyRef{}
	}
	nr.pols[d] = p
	return p, true, nil
}

// Write writes the view rows of the batch cits in the write transaction
// of w, as WriteNewViewRows does.
func (nr *NewRows) Write(ctx context.Context, w *graph.Writer, d string, cits []Citation) error {
	if len(cits) == 0 {
		return nil
	}
	var names []string
	for _, name := range w.Views() {
		if w.View(name).Get([]byte(viewComplete)) != nil {
			names = append(names, name)
		}
	}
	if len(names) == 0 {
		return nil
	}
	typ, citation, retrieval := iri(vocab.RDFType), citationClass, iri(vocab.Retrieval)
	type fresh struct {
		c        *Citation
		readBack bool
	}
	var todo []fresh
	for i := range cits {
		if i%1024 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		c := &cits[i]
		added, err := w.Added(graph.Quad{S: c.Node, P: typ, O: citation})
		if err != nil {
			return err
		}
		if !added {
			continue
		}
		f := fresh{c: c}
		if c.Retrieval.Value != "" {
			newRet, err := w.Added(graph.Quad{S: c.Retrieval, P: typ, O: retrieval})
			if err != nil {
				return err
			}
			f.readBack = !newRet
		}
		todo = append(todo, f)
	}
	gr, err := w.Reader()
	if err != nil {
		return err
	}
	rd := NewReader(ctx, gr)
	for _, name := range names {
		pol, ok, err := nr.policy(rd, name)
		if err != nil {
			return err
		}
		if !ok {
			continue
		}
		vw, err := newViewWriter(ctx, w, w.View(name), pol, policyKeyOf(pol))
		if err != nil {
			return err
		}
		var rows []store.ViewRow
		for _, f := range todo {
			if f.readBack {
				if err := vw.write(f.c.Node.Value); err != nil {
					return err
				}
				continue
			}
			row := f.c.Row
			if name != d {
				row.Key, row.State, row.KeyContent = "", store.RowUnnormalized, false
				if row.Member != nil {
					// Never normalized under this view's policy.
					m := *row.Member
					m.Norm = nil
					row.Member = &m
				}
			}
			if !vw.members {
				row.Member = nil
			}
			rows = append(rows, row)
		}
		if err := vw.writeNew(rows); err != nil {
			return err
		}
		if err := vw.finish(); err != nil {
			return fmt.Errorf("view of policy %s: %w", name, err)
		}
	}
	return nil
}

// writeNew writes the rows of citations the batch added, but those
// written already (a citation id repeated in the batch), and their
// postings. Rows and postings go in key order, so that the batch's writes
// to a page of the view follow each other.
func (vw *viewWriter) writeNew(rows []store.ViewRow) error {
	type kv struct {
		k []byte
		r *store.ViewRow
	}
	sorted := make([]kv, len(rows))
	for i := range rows {
		sorted[i] = kv{rowKey(rows[i].Key, rows[i].CitationID), &rows[i]}
	}
	slices.SortFunc(sorted, func(a, b kv) int { return bytes.Compare(a.k, b.k) })
	var ps []posting
	for i, e := range sorted {
		// A run map is not asked: a row the batch adds cannot be
		// stored (the batch added its citation).
		if i > 0 && bytes.Equal(e.k, sorted[i-1].k) || !vw.runs && vw.rows.Get(e.k) != nil {
			continue
		}
		if err := vw.rows.Put(e.k, encodeRow(*e.r)); err != nil {
			return err
		}
		vw.count++
		if e.r.Key != "" {
			vw.dirty[e.r.Key] = true
		}
		ps = postingsOf(ps, *e.r, vw.keyOf)
	}
	slices.SortFunc(ps, func(a, b posting) int { return cmp.Or(strings.Compare(a.sub, b.sub), strings.Compare(a.key, b.key)) })
	for i, p := range ps {
		if i > 0 && p == ps[i-1] {
			continue
		}
		if err := vw.put(p); err != nil {
			return err
		}
	}
	return nil
}

// SharedValues calls fn with each content hash (kind "content") or text
// digest ("digest") that the postings of the view of policy d give to two
// keys or more, or each key that one key or more redirects to
// ("redirect") or points at by a relation ("relation"), in the posting
// map's order (shorter values first, then byte order), reading the
// posting map once in order.
// The content hashes and digests it leaves out belong to one key each: a
// full listing need not look them up (query.LoadGroupsFromView), as the
// key that has one is already in its batch; the keys it leaves out of
// the redirect and relation targets have no sources to look up.
func (s *Store) SharedValues(ctx context.Context, d, kind string, fn func(value string) error) error {
	var sub string
	least := 2 // keys a value is given to, at least
	switch kind {
	case subContent, subDigest:
		sub = kind
	case subRedirect, subRelation:
		sub, least = kind, 1
	default:
		return fmt.Errorf("shared values: kind %q: want content, digest, redirect or relation", kind)
	}
	prefix := viewPrefixer(sub)
	return s.viewRead(ctx, d, func(b *graph.Bucket) error {
		p, err := s.readMap(d, b, sub)
		if err != nil || p == nil {
			return err
		}
		var last []byte
		n, seen := 0, 0
		return p.Ascend(nil, func(k, _ []byte) (bool, error) {
			if seen++; seen%4096 == 0 {
				if err := ctx.Err(); err != nil {
					return false, err
				}
			}
			v := k[:prefix(k)]
			if len(v) == 0 || len(v) == len(k) {
				return false, viewDamage(d, fmt.Errorf("posting bucket %s holds %q, which is not a value then a key", sub, k))
			}
			if bytes.Equal(v, last) {
				n++
			} else {
				last, n = append(last[:0], v...), 1
			}
			if n == least {
				val, _, err := readStr(v)
				if err != nil {
					return false, viewDamage(d, err)
				}
				if err := fn(val); err != nil {
					return false, err
				}
			}
			return true, nil
		})
	})
}
