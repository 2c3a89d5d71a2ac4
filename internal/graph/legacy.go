package graph

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"

	cgraph "github.com/cayleygraph/cayley/graph"
	ckv "github.com/cayleygraph/cayley/graph/kv"
	"github.com/cayleygraph/quad"
	hbolt "github.com/hidal-go/hidalgo/kv/bbolt"
	"go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"
)

// ReadV1 calls fn with every quad of a store in format version 1
// (cayley's kv layout, written by provgraph before the compact store), so
// that it can be converted: `provgraph convert` adds them to a new store.
// The file is opened read-only and never changed. A file in another format
// is an error wrapping ErrNotStore.
func ReadV1(ctx context.Context, path string, fn func(Quad) error) (err error) {
	g := newGuard(path, "read format 1", &err)
	defer g.done()
	fail := func(err error) error { return &Error{Op: "read format 1", Path: path, Err: err} }
	db, err := openEarlier(path)
	if err != nil {
		return fail(err)
	}
	kv := hbolt.New(db)
	defer kv.Close()
	var name, version string
	db.View(func(tx *bbolt.Tx) error {
		if b := tx.Bucket([]byte(metaBucket)); b != nil {
			name, version = string(b.Get([]byte(keyFormat))), string(b.Get([]byte(keyVersion)))
		}
		return nil
	})
	if name != v1FormatName || version != "1" {
		return fail(fmt.Errorf("%w: the file is not in format %s version 1 (its marker says %q version %q)", ErrNotStore, v1FormatName, name, version))
	}
	qs, err := ckv.New(kv, cgraph.Options{ckv.OptNoBloom: true})
	if err != nil {
		return fail(fmt.Errorf("cayley: %w", err))
	}
	it := qs.QuadsAllIterator().Iterate()
	defer it.Close()
	for n := 0; it.Next(ctx); n++ {
		q, err := qs.Quad(it.Result())
		if err != nil {
			return fail(err)
		}
		var out Quad
		for _, f := range []struct {
			v quad.Value
			t *Term
		}{{q.Subject, &out.S}, {q.Predicate, &out.P}, {q.Object, &out.O}, {q.Label, &out.G}} {
			if *f.t, err = v1Term(f.v); err != nil {
				return fail(fmt.Errorf("quad %d: %w", n, err))
			}
		}
		if err := g.call(func() error { return fn(out) }); err != nil {
			return err
		}
	}
	if err := it.Err(); err != nil {
		return fail(err)
	}
	return ctx.Err()
}

// v1Term converts a value as format 1 stored it back to a Term, exactly:
// format 1 wrote only IRIs, blank nodes, TypedStrings (every literal
// without a language tag, xsd:string included) and LangStrings.
func v1Term(v quad.Value) (Term, error) {
	switch v := v.(type) {
	case nil:
		return Term{}, nil
	case quad.IRI:
		return Term{Kind: KindIRI, Value: string(v)}, nil
	case quad.BNode:
		return Term{Kind: KindBlank, Value: string(v)}, nil
	case quad.TypedString:
		return Term{Kind: KindLiteral, Value: string(v.Value), Datatype: string(v.Type)}, nil
	case quad.LangString:
		return Term{Kind: KindLiteral, Value: string(v.Value), Datatype: RDFLangStr, Lang: v.Lang}, nil
	}
	return Term{}, fmt.Errorf("stored value %v has cayley type %T, which format 1 never wrote", v, v)
}

// ReadV2 calls fn with every quad of a store in format version 2 (this
// layout with POS and OSP as B-trees instead of runs), so that it can be
// converted. Versions 2 and 3 share the dictionary and the SPO index,
// which is all it reads. The file is opened read-only and never changed.
// A file in another format is an error wrapping ErrNotStore.
func ReadV2(ctx context.Context, path string, fn func(Quad) error) (err error) {
	g := newGuard(path, "read format 2", &err)
	defer g.done()
	fail := func(err error) error { return &Error{Op: "read format 2", Path: path, Err: err} }
	db, err := openEarlier(path)
	if err != nil {
		return fail(err)
	}
	defer db.Close()
	var fnErr error
	err = db.View(func(tx *bbolt.Tx) error {
		var name, version string
		if b := tx.Bucket([]byte(metaBucket)); b != nil {
			name, version = string(b.Get([]byte(keyFormat))), string(b.Get([]byte(keyVersion)))
		}
		if name != formatName || version != "2" {
			return fmt.Errorf("%w: the file is not in format %s version 2 (its marker says %q version %q)", ErrNotStore, formatName, name, version)
		}
		spo, terms := tx.Bucket([]byte(indexBuckets[idxSPO])), tx.Bucket([]byte(termsBucket))
		if spo == nil || terms == nil {
			return fmt.Errorf("%w: bucket %q or %q is missing (damaged file?)", ErrNotStore, indexBuckets[idxSPO], termsBucket)
		}
		names := newTermReader(tx)
		n := 0
		all := tuple{math.MaxUint32, math.MaxUint32, math.MaxUint32, math.MaxUint32}
		return scanRange(spo, tuple{}, all, func(t tuple) error {
			if n++; n%65536 == 0 {
				if err := ctx.Err(); err != nil {
					return err
				}
			}
			q, err := names.quad(ids4(t))
			if err != nil {
				return fmt.Errorf("quad %v: %w", t, err)
			}
			if fnErr = g.call(func() error { return fn(q) }); fnErr != nil {
				return errStop
			}
			return nil
		})
	})
	if fnErr != nil {
		return fnErr
	}
	if err != nil {
		return fail(err)
	}
	return ctx.Err()
}

// ReadEarlier calls fn with every quad of a store written in an earlier
// format (version 1 or 2), whichever the file's marker names.
func ReadEarlier(ctx context.Context, path string, fn func(Quad) error) error {
	version, err := markerVersion(path)
	if err != nil {
		return readError(path, "read", err)
	}
	if version == "2" {
		return ReadV2(ctx, path, fn)
	}
	return ReadV1(ctx, path, fn)
}

// markerVersion reads the version a file's format marker names, or "" for
// a file without one.
func markerVersion(path string) (v string, err error) {
	g := newGuard(path, "read", &err)
	defer g.done()
	db, err := openEarlier(path)
	if err != nil {
		return "", err
	}
	defer db.Close()
	db.View(func(tx *bbolt.Tx) error {
		if b := tx.Bucket([]byte(metaBucket)); b != nil && string(b.Get([]byte(keyFormat))) == formatName {
			v = string(b.Get([]byte(keyVersion)))
		}
		return nil
	})
	return v, nil
}

// openEarlier opens a file of an earlier format read-only, with bbolt
// alone: a missing file, a lock held past DefaultLockTimeout (ErrLocked)
// and a file bbolt cannot read (ErrNotStore) are errors.
func openEarlier(path string) (*bbolt.DB, error) {
	if _, err := os.Stat(path); err != nil {
		return nil, err
	}
	if err := checkFile(path); err != nil {
		return nil, err
	}
	db, err := openBolt(path, &bbolt.Options{ReadOnly: true, Timeout: DefaultLockTimeout})
	switch {
	case errors.Is(err, berrors.ErrTimeout):
		return nil, ErrLocked
	case errors.As(err, new(*Error)):
		return nil, err
	case err != nil:
		return nil, fmt.Errorf("%w: %v", ErrNotStore, err)
	}
	return db, nil
}
