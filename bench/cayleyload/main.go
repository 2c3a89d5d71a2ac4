//go:build ignore

// This is the main package of the cayley CLI that bench/ingest.sh builds
// in a scratch module (it is not part of provgraph's module: the build tag
// keeps it out, and the script copies it without the tag). It is cayley's
// own cmd/cayley/cayley.go at the version provgraph requires, reduced to
// the init, load and dump commands and the root flags they read, with one
// addition: a blank import of github.com/cayleygraph/cayley/graph/kv/bbolt,
// which registers the "bbolt" backend (go.etcd.io/bbolt, the engine
// provgraph uses). The stock CLI imports graph/all, whose kv registry skips
// hidalgo's bbolt and registers only "bolt" (github.com/boltdb/bolt).
//
// Load runs cayley's own code path: command.NewLoadDatabaseCmd reads the
// file with quad/nquads and copies it with quad.CopyBatch in batches of
// --batch quads (default quad.DefaultBatch, 10,000), each one
// ApplyDeltas call, that is one bbolt transaction, through the "single"
// quad writer. Store options (cayley's graph.Options, such as no_bloom)
// come, as in cayley, from store.options in a --config file.
package main

import (
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/viper"

	"github.com/cayleygraph/cayley/clog"
	"github.com/cayleygraph/cayley/cmd/cayley/command"
	"github.com/cayleygraph/cayley/graph"
	"github.com/cayleygraph/quad"

	// The kv quad store, its boltdb ("bolt") and bbolt ("bbolt") backends.
	_ "github.com/cayleygraph/cayley/graph/kv"
	_ "github.com/cayleygraph/cayley/graph/kv/bbolt"
	_ "github.com/cayleygraph/cayley/graph/kv/bolt"

	// The N-Quads reader and writer, and the "single" quad writer.
	_ "github.com/cayleygraph/cayley/writer"
	_ "github.com/cayleygraph/quad/nquads"
)

func main() {
	root := &cobra.Command{
		Use:          "cayley",
		Short:        "cayley init/load/dump, with the bbolt backend registered",
		SilenceUsage: true,
		PersistentPreRunE: func(cmd *cobra.Command, args []string) error {
			// As cayley's own root command does, except that a config
			// file is read only when --config names one.
			if conf, _ := cmd.Flags().GetString("config"); conf != "" {
				viper.SetConfigFile(conf)
				if err := viper.ReadInConfig(); err != nil {
					return err
				}
			}
			graph.IgnoreDuplicates = viper.GetBool("load.ignore_duplicates")
			graph.IgnoreMissing = viper.GetBool("load.ignore_missing")
			quad.DefaultBatch = viper.GetInt("load.batch")
			return nil
		},
	}
	root.AddCommand(command.NewInitDatabaseCmd(), command.NewLoadDatabaseCmd(), command.NewDumpDatabaseCmd())

	pf := root.PersistentFlags()
	pf.StringP("config", "c", "", "configuration file (YAML), e.g. store.options.no_bloom: true")
	pf.StringP("db", "d", "memstore", "database backend to use: "+strings.Join(graph.QuadStores(), ", "))
	pf.StringP("dbpath", "a", "", "path or address string for database")
	pf.Bool("read_only", false, "open database in read-only mode")
	pf.Bool("dup", true, "don't stop loading on duplicated on add")
	pf.Bool("missing", false, "don't stop loading on missing key on delete")
	pf.Int("batch", quad.DefaultBatch, "size of quads batch to load at once")
	pf.String("memprofile", "", "path to output memory profile")
	pf.String("cpuprofile", "", "path to output cpu profile")
	viper.BindPFlag(command.KeyBackend, pf.Lookup("db"))
	viper.BindPFlag(command.KeyAddress, pf.Lookup("dbpath"))
	viper.BindPFlag(command.KeyReadOnly, pf.Lookup("read_only"))
	viper.BindPFlag("load.ignore_duplicates", pf.Lookup("dup"))
	viper.BindPFlag("load.ignore_missing", pf.Lookup("missing"))
	viper.BindPFlag(command.KeyLoadBatch, pf.Lookup("batch"))
	viper.RegisterAlias(command.KeyPath, command.KeyAddress)

	if err := root.Execute(); err != nil {
		clog.Errorf("%v", err)
		fmt.Fprintln(os.Stderr, "cayley:", err)
		os.Exit(1)
	}
}
