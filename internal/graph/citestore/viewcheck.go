package citestore

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"slices"
	"strings"

	"github.com/provgraph/provgraph/internal/graph"
	"github.com/provgraph/provgraph/internal/normalize"
	"github.com/provgraph/provgraph/internal/store"
)

// Check implements store.Checker: graph.Store.Check, then every grouping
// view against the quads (CheckViews).
func (s *Store) Check(ctx context.Context) error {
	if err := s.g.Check(ctx); err != nil {
		return err
	}
	return s.CheckViews(ctx)
}

// CheckViews verifies each complete view against the quads: its rows
// against the rows a scan makes (store.ScanViewRows), compared in key and
// citation id order, its row count, and its postings against those its
// rows give. A difference is a problem naming the policy and the first
// differing key and citation id or posting; the error wraps
// graph.ErrCorrupt. An incomplete view (an interrupted rebuild) is not
// used and not checked.
func (s *Store) CheckViews(ctx context.Context) error {
	infos, err := s.Views(ctx)
	if err != nil {
		return err
	}
	var problems []string
	for _, info := range infos {
		if !info.Complete {
			continue
		}
		ps, err := s.checkView(ctx, info)
		if err != nil {
			return err
		}
		problems = append(problems, ps...)
	}
	if len(problems) == 0 {
		return nil
	}
	return &graph.Error{Op: "check", Path: s.g.Path(), Err: fmt.Errorf("%w:\n\t%s", graph.ErrCorrupt, strings.Join(problems, "\n\t"))}
}

// expectedRow is a row as the scan makes it: its row key and value.
type expectedRow struct{ k, v []byte }

func (s *Store) checkView(ctx context.Context, info store.ViewInfo) ([]string, error) {
	d := info.Policy.Digest
	name := "view of policy " + info.Policy.String()
	if info.Policy.Node == "" {
		return []string{fmt.Sprintf("view %s: the database holds no policy with this digest (run provgraph view rebuild, or remove the view)", d)}, nil
	}
	var want []expectedRow
	err := store.ScanViewRows(ctx, s, d, func(r store.ViewRow) error {
		want = append(want, expectedRow{rowKey(r.Key, r.CitationID), encodeRow(r)})
		return nil
	})
	if err != nil {
		return nil, err
	}
	slices.SortFunc(want, func(a, b expectedRow) int { return bytes.Compare(a.k, b.k) })
	keyOf, exact := policyKeyOf(info.Policy), engineSame(info.Policy)
	var problems []string
	problem := func(format string, args ...any) {
		if len(problems) < 10 {
			problems = append(problems, name+": "+fmt.Sprintf(format, args...))
		}
	}
	describe := func(k []byte) string {
		key, id, _ := splitRowKey(k)
		if key == "" {
			return "citation " + id + " (no key)"
		}
		return fmt.Sprintf("key %s, citation %s", key, id)
	}
	postings := map[posting]bool{}
	var rowsSeen int64
	err = s.within(func(r *graph.Reader) error {
		b := r.View(d)
		if b == nil {
			return nil
		}
		rows, err := b.Sub(subRows, false)
		if err != nil {
			return err
		}
		i := 0
		firstDiff := true
		diff := func(format string, args ...any) {
			if firstDiff {
				problem(format, args...)
				firstDiff = false
			}
		}
		if rows != nil {
			err = rows.Ascend(nil, func(k, v []byte) (bool, error) {
				rowsSeen++
				for i < len(want) && bytes.Compare(want[i].k, k) < 0 {
					diff("the view lacks the row of %s, which the quads give (first difference)", describe(want[i].k))
					i++
				}
				switch {
				case i < len(want) && bytes.Equal(want[i].k, k):
					if !bytes.Equal(want[i].v, v) {
						diff("the row of %s differs from what the quads give (first difference)", describe(k))
					}
					i++
				default:
					diff("the view holds a row of %s that the quads do not give (first difference)", describe(k))
				}
				row, err := decodeRow(k, v)
				if err != nil {
					problem("%v", err)
					return true, nil
				}
				for _, p := range postingsOf(nil, row, keyOf) {
					postings[p] = true
				}
				return true, nil
			})
			if err != nil {
				return err
			}
		}
		if i < len(want) {
			diff("the view lacks the row of %s, which the quads give (first difference)", describe(want[i].k))
		}
		if c := b.Get([]byte(viewRowsCount)); len(c) != 8 || int64(binary.BigEndian.Uint64(c)) != rowsSeen {
			problem("its row count says %d, it holds %d rows", countOf(c), rowsSeen)
		}
		for _, sub := range postingSubs {
			if !exact && (sub == subRedirect || sub == subRelation) {
				continue // targets made by another engine: grouping does not use the view
			}
			pb, err := b.Sub(sub, false)
			if err != nil {
				return err
			}
			var stray, missing []string
			found := 0
			if pb != nil {
				err = pb.Ascend(nil, func(k, _ []byte) (bool, error) {
					if postings[posting{sub, string(k)}] {
						found++
					} else if len(stray) == 0 {
						stray = append(stray, fmt.Sprintf("%q", k))
					}
					return true, nil
				})
				if err != nil {
					return err
				}
			}
			if len(stray) > 0 {
				problem("posting bucket %s holds %s, which no row gives", sub, stray[0])
			}
			if want := countSub(postings, sub); found != want {
				for p := range postings {
					if p.sub == sub && (pb == nil || pb.Get([]byte(p.key)) == nil) {
						missing = append(missing, fmt.Sprintf("%q", p.key))
					}
				}
				slices.Sort(missing)
				if len(missing) > 0 {
					problem("posting bucket %s lacks %s, which the rows give (%d missing)", sub, missing[0], len(missing))
				}
			}
		}
		return nil
	})
	return problems, err
}

func countOf(c []byte) any {
	if len(c) != 8 {
		return "nothing readable"
	}
	return binary.BigEndian.Uint64(c)
}

func countSub(ps map[posting]bool, sub string) int {
	n := 0
	for p := range ps {
		if p.sub == sub {
			n++
		}
	}
	return n
}

// engineSame reports whether this build's normalization engine makes
// the policy's keys as stored (grouping's Snapshot.EngineChanged is the
// opposite): only then are the targets of redirect and relation postings
// this build's to check.
func engineSame(pol store.PolicyRef) bool {
	p, err := normalize.ParsePolicy([]byte(pol.Text), "database:"+pol.String())
	if err != nil {
		return false
	}
	return p.Digest() == pol.Digest
}
