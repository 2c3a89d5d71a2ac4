package query

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/lanrat/extsort"
)

// PolicyDiffer finds what DiffPolicies finds, the groups that merge or
// split between two policies, without holding either grouping: each
// policy's groups are read once, as a GroupSet writes them (from a scan or
// a grouping view, one after the other), and what the comparison needs of
// them goes through two external sorts on disk. DiffPolicies joins the two
// groupings on the citation id in two maps of every citation; at a million
// citations it held 6.8 GB, and ten million would not fit this machine.
//
// The first sort orders one record per member and policy by citation id,
// so that a citation's group under A meets its group under B. Each such
// pair goes into the second sort twice, ordered by B's group then the
// member's place in it (the merges), and by A's group then its place (the
// splits): reading it in order, a group whose members fall in two groups
// or more of the other policy is a change, with its members in the
// group's order, as DiffPolicies lists them. The groups' ids and keys wait
// in a temporary file a policy, read back for the groups that changed;
// the rules each member's normalization applied travel with its records,
// as the number of that set of rules, so that what is responsible for a
// change is known without reading a citation again.
//
// Memory is what reading one policy's groups takes (the GroupSet's), the
// sorts' working set (DiskSort.Mem) and the changes found, which the
// report holds whole. The temporary files are unlinked as soon
// as they are created, so that no exit, kill -9 included, leaves them.
type PolicyDiffer struct {
	how    DiskSort
	sides  [2]diffSide
	added  int
	in     chan string           // the first sort's input
	out    <-chan string         // the first sort's output
	errs   <-chan error          // the first sort's error
	cancel context.CancelFunc    // stops both sorts
	sorter *extsort.StringSorter // the first sort
	closed bool                  // in is closed
	// ruleSets numbers each distinct set of rules a member's
	// normalization applied (ruleSetKey), sets the number, in order: a
	// record carries the number, and the sets are few (the combinations
	// of a policy's rules that occur).
	ruleSets map[string]uint32
	sets     []map[string]bool
}

// DiskSort says where and in how much memory a sort on disk runs (a
// PolicyDiffer's two, ExplainFromView's one).
type DiskSort struct {
	// Dir is the directory of the temporary files, os.TempDir() when
	// empty.
	Dir string
	// Mem is the working set of the sorts together, in bytes;
	// DefaultSortMem when 0 or less.
	Mem int64
}

// DefaultSortMem is the sorts' working set when DiskSort.Mem is not set.
const DefaultSortMem = 128 << 20

// diffRecordBytes is about what a sort record takes in memory: its
// string's header and bytes (some 40 bytes and a citation id) rounded to
// the allocator's size class.
const diffRecordBytes = 112

// diffSide is what a PolicyDiffer keeps of one policy's groups.
type diffSide struct {
	policy PolicyRef
	groups uint32
	refs   *os.File // each group's id and key, in the order read
	w      *bufio.Writer
}

// NewPolicyDiffer starts the sorts; Close ends them and removes their
// files.
func NewPolicyDiffer(ctx context.Context, how DiskSort) (*PolicyDiffer, error) {
	if how.Dir == "" {
		how.Dir = os.TempDir()
	}
	if how.Mem <= 0 {
		how.Mem = DefaultSortMem
	}
	d := &PolicyDiffer{how: how, in: make(chan string, 4096), ruleSets: map[string]uint32{}}
	for i := range d.sides {
		f, err := tempUnlinked(how.Dir, "policy-diff")
		if err != nil {
			d.closeFiles()
			return nil, err
		}
		d.sides[i].refs, d.sides[i].w = f, bufio.NewWriterSize(f, 64<<10)
	}
	ctx, d.cancel = context.WithCancel(ctx)
	d.sorter, d.out, d.errs = extsort.Strings(d.in, d.config())
	go d.sorter.Sort(ctx)
	return d, nil
}

// config is the sorts' configuration (DiskSort.config): two run at once.
func (d *PolicyDiffer) config() *extsort.Config { return d.how.config(2) }

// config is the configuration of one of n sorts that run at once within
// s.Mem: each holds up to four chunks at once (one filling, one waiting,
// two being sorted).
func (s DiskSort) config(n int64) *extsort.Config {
	return &extsort.Config{
		ChunkSize:          int(max(2, s.Mem/(n*4*diffRecordBytes))),
		NumWorkers:         2,
		ChanBuffSize:       1,
		SortedChanBuffSize: 4096,
		TempFilesDir:       s.Dir,
	}
}

// tempUnlinked creates a temporary file in dir and unlinks it at once, so
// that no exit leaves it behind; what names the command in errors.
func tempUnlinked(dir, what string) (*os.File, error) {
	f, err := os.CreateTemp(dir, "provgraph-"+what+"-")
	if err != nil {
		return nil, fmt.Errorf("%s: temporary file: %w", what, err)
	}
	if err := os.Remove(f.Name()); err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: temporary file: %w", what, err)
	}
	return f, nil
}

// readStringFrom reads a string as appendString wrote it from r.
func readStringFrom(r *bufio.Reader) (string, error) {
	n, err := binary.ReadUvarint(r)
	if err != nil {
		return "", err
	}
	b := make([]byte, n)
	_, err = io.ReadFull(r, b)
	return string(b), err
}

// Add reads the groups of one policy, A on the first call and B on the
// second.
func (d *PolicyDiffer) Add(ctx context.Context, set *GroupSet) error {
	if d.added == 2 {
		return errors.New("query: PolicyDiffer.Add called a third time")
	}
	side := &d.sides[d.added]
	tag := byte(d.added)
	d.added++
	side.policy = set.Policy()
	var rec []byte
	_, err := set.Write(ctx, appendDiffGroup, func(b []byte) error {
		for len(b) > 0 {
			g, rest, err := readDiffGroup(b)
			if err != nil {
				return err
			}
			b = rest
			ord := side.groups
			side.groups++
			if err := writeRef(side.w, g.id, g.key); err != nil {
				return fmt.Errorf("policy-diff: temporary file: %w", err)
			}
			for pos, m := range g.members {
				// The citation id first, its length before it, so that
				// the two records of one citation sort together, A's
				// first, whatever bytes the id holds.
				rec = binary.BigEndian.AppendUint32(rec[:0], uint32(len(m.id)))
				rec = append(rec, m.id...)
				rec = append(rec, tag)
				rec = binary.BigEndian.AppendUint32(rec, ord)
				rec = binary.BigEndian.AppendUint32(rec, uint32(pos))
				rec = binary.BigEndian.AppendUint32(rec, d.ruleSet(m.rules))
				select {
				case d.in <- string(rec):
				case <-ctx.Done():
					return ctx.Err()
				}
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	return side.w.Flush()
}

// ruleSet returns the number of the set of rules key names (ruleSetKey).
func (d *PolicyDiffer) ruleSet(key string) uint32 {
	n, ok := d.ruleSets[key]
	if !ok {
		n = uint32(len(d.sets))
		d.ruleSets[key] = n
		set := map[string]bool{}
		for r := range strings.SplitSeq(key, "\x00") {
			if r != "" {
				set[r] = true
			}
		}
		d.sets = append(d.sets, set)
	}
	return n
}

// ruleSetKey names the set of rules c's normalization applied (ruleSet),
// sorted, each followed by a NUL.
func ruleSetKey(c *Citation) string {
	set := ruleSet(c)
	rules := make([]string, 0, len(set))
	for r := range set {
		rules = append(rules, r)
	}
	slices.Sort(rules)
	var b strings.Builder
	for _, r := range rules {
		b.WriteString(r)
		b.WriteByte(0)
	}
	return b.String()
}

// diffGroup is what a PolicyDiffer reads of a group.
type diffGroup struct {
	id, key string
	members []diffMember
}

// diffMember is what a PolicyDiffer reads of a member: its citation id,
// and the rules its normalization applied (ruleSetKey), which name what
// is responsible for a change.
type diffMember struct{ id, rules string }

// appendDiffGroup encodes what a PolicyDiffer reads of g: its id, its key
// and its members' citation ids and rules (ruleSetKey), in order, each a
// length and its bytes.
func appendDiffGroup(buf []byte, g *Group) []byte {
	buf = appendString(buf, g.ID)
	buf = appendString(buf, g.Key)
	buf = binary.AppendUvarint(buf, uint64(len(g.Members)))
	for _, m := range g.Members {
		buf = appendString(buf, m.CitationID)
		buf = appendString(buf, ruleSetKey(m.Citation()))
	}
	return buf
}

func appendString(buf []byte, s string) []byte {
	buf = binary.AppendUvarint(buf, uint64(len(s)))
	return append(buf, s...)
}

// readDiffGroup decodes one group appendDiffGroup wrote at the start of b.
func readDiffGroup(b []byte) (diffGroup, []byte, error) {
	var g diffGroup
	var err error
	if g.id, b, err = readString(b); err != nil {
		return g, nil, err
	}
	if g.key, b, err = readString(b); err != nil {
		return g, nil, err
	}
	n, w := binary.Uvarint(b)
	if w <= 0 || n > uint64(len(b)) {
		return g, nil, errors.New("query: policy-diff: bad group encoding")
	}
	b = b[w:]
	g.members = make([]diffMember, n)
	for i := range g.members {
		if g.members[i].id, b, err = readString(b); err != nil {
			return g, nil, err
		}
		if g.members[i].rules, b, err = readString(b); err != nil {
			return g, nil, err
		}
	}
	return g, b, nil
}

func readString(b []byte) (string, []byte, error) {
	n, w := binary.Uvarint(b)
	if w <= 0 || n > uint64(len(b)-w) {
		return "", nil, errors.New("query: policy-diff: bad encoding")
	}
	return string(b[w : w+int(n)]), b[w+int(n):], nil
}

// writeRef appends a group's id and key to its side's file.
func writeRef(w *bufio.Writer, id, key string) error {
	var buf []byte
	buf = appendString(buf, id)
	buf = appendString(buf, key)
	_, err := w.Write(buf)
	return err
}

// Diff compares the two policies' groups.
func (d *PolicyDiffer) Diff(ctx context.Context) (*PolicyDiff, error) {
	if d.added != 2 {
		return nil, errors.New("query: PolicyDiffer.Diff before both policies were added")
	}
	close(d.in)
	d.closed = true
	// The second sort: the pairs, by the group of each side.
	in2 := make(chan string, 4096)
	ctx2, cancel := context.WithCancel(ctx)
	defer cancel()
	sorter2, out2, errs2 := extsort.Strings(in2, d.config())
	go sorter2.Sort(ctx2)
	joinErr := make(chan error, 1)
	go func() {
		defer close(in2)
		joinErr <- d.join(ctx2, in2)
	}()
	changes, err := d.changes(out2)
	if err == nil {
		err = <-errs2
	} else {
		cancel()
		for range out2 {
		}
	}
	if jerr := <-joinErr; err == nil {
		err = jerr
	}
	if err != nil {
		return nil, err
	}
	pa, pb := d.sides[0].policy, d.sides[1].policy
	res := &PolicyDiff{A: pa, B: pb, Changes: []GroupDiff{}, Rules: policyTextDifferences(pa, pb), Counts: map[string]int{}}
	refs := [2]map[uint32]GroupRef{{}, {}}
	for _, c := range changes {
		refs[c.side][c.group] = GroupRef{}
		for _, p := range c.parts {
			refs[1-c.side][p] = GroupRef{}
		}
	}
	for i := range d.sides {
		if err := d.sides[i].readRefs(refs[i]); err != nil {
			return nil, err
		}
	}
	for _, c := range changes {
		kind := "split"
		if c.side == 1 {
			kind = "merge"
		}
		gd := GroupDiff{Kind: kind, Group: refs[c.side][c.group], Citations: c.cites}
		for _, p := range c.parts {
			gd.Parts = append(gd.Parts, refs[1-c.side][p])
		}
		slices.SortFunc(gd.Parts, func(x, y GroupRef) int { return strings.Compare(x.Key, y.Key) })
		gd.Rules = d.responsible(c.pairs)
		res.Changes = append(res.Changes, gd)
		res.Counts[kind]++
	}
	slices.SortFunc(res.Changes, func(x, y GroupDiff) int {
		return strings.Compare(x.Kind+x.Group.Key, y.Kind+y.Group.Key)
	})
	res.Counts["groups_a"], res.Counts["groups_b"] = int(d.sides[0].groups), int(d.sides[1].groups)
	return res, nil
}

// join reads the first sort, where the records of one citation are
// consecutive (A's, then B's), and writes each citation in a group under
// both policies to the second sort twice: "m", B's group, the member's
// place in it, A's group; and "s", A's group, its place there, B's group;
// each followed by the numbers of its rule sets under A and B, then the
// citation id.
func (d *PolicyDiffer) join(ctx context.Context, out chan<- string) error {
	var prev string
	send := func(s string) error {
		select {
		case out <- s:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	var rec []byte
	for r := range d.out {
		if len(r) < 4 {
			return errors.New("query: policy-diff: bad sort record")
		}
		n := int(binary.BigEndian.Uint32([]byte(r[:4])))
		if len(r) != 4+n+13 {
			return errors.New("query: policy-diff: bad sort record")
		}
		if prev != "" && prev[:len(prev)-13] == r[:len(r)-13] && prev[len(prev)-13] == 0 && r[len(r)-13] == 1 {
			id := r[4 : 4+n]
			a, b := prev[len(prev)-12:], r[len(r)-12:] // group, place, rules
			rules := a[8:] + b[8:]
			rec = append(append(append(append(append(rec[:0], 'm'), b[:8]...), a[:4]...), rules...), id...)
			if err := send(string(rec)); err != nil {
				return err
			}
			rec = append(append(append(append(append(rec[:0], 's'), a[:8]...), b[:4]...), rules...), id...)
			if err := send(string(rec)); err != nil {
				return err
			}
		}
		prev = r
	}
	return <-d.errs
}

// diffChange is a change found by its groups' numbers: side is the
// policy of the group that merges (1, B) or splits (0, A), parts the
// other policy's groups.
type diffChange struct {
	side  int
	group uint32
	parts []uint32
	cites []string
	pairs [][2]uint32 // the members' rule sets under A and B, each pair once
}

// changes reads the second sort: the records of one group are
// consecutive, in the order of its members.
func (d *PolicyDiffer) changes(in <-chan string) ([]diffChange, error) {
	var out []diffChange
	var cur diffChange
	have := false
	flush := func() {
		if have && len(cur.parts) > 1 {
			slices.Sort(cur.parts)
			cur.parts = slices.Compact(cur.parts)
			if len(cur.parts) > 1 {
				out = append(out, cur)
			}
		}
		cur, have = diffChange{}, false
	}
	for r := range in {
		if len(r) < 21 || r[0] != 'm' && r[0] != 's' {
			return nil, errors.New("query: policy-diff: bad sort record")
		}
		side := 0
		if r[0] == 'm' {
			side = 1
		}
		group := binary.BigEndian.Uint32([]byte(r[1:5]))
		other := binary.BigEndian.Uint32([]byte(r[9:13]))
		if !have || cur.side != side || cur.group != group {
			flush()
			cur, have = diffChange{side: side, group: group}, true
		}
		if !slices.Contains(cur.parts, other) {
			cur.parts = append(cur.parts, other)
		}
		pair := [2]uint32{binary.BigEndian.Uint32([]byte(r[13:17])), binary.BigEndian.Uint32([]byte(r[17:21]))}
		if !slices.Contains(cur.pairs, pair) {
			cur.pairs = append(cur.pairs, pair)
		}
		cur.cites = append(cur.cites, r[21:])
	}
	flush()
	return out, nil
}

// readRefs fills want (group number to reference) from the side's file.
func (s *diffSide) readRefs(want map[uint32]GroupRef) error {
	if len(want) == 0 {
		return nil
	}
	if _, err := s.refs.Seek(0, io.SeekStart); err != nil {
		return fmt.Errorf("policy-diff: temporary file: %w", err)
	}
	r := bufio.NewReaderSize(s.refs, 64<<10)
	read := func() (string, error) { return readStringFrom(r) }
	for ord := uint32(0); ord < s.groups; ord++ {
		id, err := read()
		if err != nil {
			return fmt.Errorf("policy-diff: temporary file: %w", err)
		}
		key, err := read()
		if err != nil {
			return fmt.Errorf("policy-diff: temporary file: %w", err)
		}
		if _, ok := want[ord]; ok {
			want[ord] = GroupRef{ID: id, Key: key}
		}
	}
	return nil
}

// responsible lists the rules applied under exactly one policy to the
// members of a change, as responsible does, from their rule sets' pairs.
func (d *PolicyDiffer) responsible(pairs [][2]uint32) []string {
	sets := make([][2]map[string]bool, len(pairs))
	for i, p := range pairs {
		sets[i] = [2]map[string]bool{d.sets[p[0]], d.sets[p[1]]}
	}
	return onlyUnderOne(sets)
}

// Close stops the sorts and closes the temporary files.
func (d *PolicyDiffer) Close() {
	if d.cancel != nil {
		d.cancel()
		if !d.closed {
			close(d.in)
			d.closed = true
		}
		for range d.out { // so that the sort's goroutines end
		}
	}
	d.closeFiles()
}

func (d *PolicyDiffer) closeFiles() {
	for i := range d.sides {
		if d.sides[i].refs != nil {
			d.sides[i].refs.Close()
		}
	}
}
