package graph_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"go.etcd.io/bbolt"

	"github.com/provgraph/provgraph/internal/graph"
)

func TestCheckFindsDamage(t *testing.T) {
	tests := []struct {
		name   string
		damage func(tx *bbolt.Tx) error
		want   string
	}{
		{
			name: "predicate index emptied",
			damage: func(tx *bbolt.Tx) error {
				if err := tx.DeleteBucket([]byte("ps")); err != nil {
					return err
				}
				_, err := tx.CreateBucket([]byte("ps"))
				return err
			},
			want: "lookup by predicate",
		},
		{
			name: "quad counter wrong",
			damage: func(tx *bbolt.Tx) error {
				return tx.Bucket([]byte("meta")).Put([]byte("size"), []byte{1, 0, 0, 0, 0, 0, 0, 0})
			},
			want: "quad counter says 1",
		},
		{
			name: "format marker removed",
			damage: func(tx *bbolt.Tx) error {
				return tx.DeleteBucket([]byte("provgraph"))
			},
			want: "not a provgraph store",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "prov.db")
			s := mustOpenPlain(t, path)
			defer s.Close()
			mustAdd(t, s, citations(0, 5)...)
			if err := s.Check(context.Background()); err != nil {
				t.Fatalf("Check() before damage = %v", err)
			}
			s.Close() // the lock keeps bbolt out while the store is open
			boltUpdate(t, path, tt.damage)
			s2, err := graph.Open(path, nil)
			if err != nil {
				// the marker case is refused by Open already
				if !strings.Contains(err.Error(), tt.want) {
					t.Errorf("Open() = %v, want it to say %q", err, tt.want)
				}
				return
			}
			defer s2.Close()
			err = s2.Check(context.Background())
			if !errors.Is(err, graph.ErrCorrupt) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Check() = %v, want ErrCorrupt saying %q", err, tt.want)
			}
		})
	}
}
