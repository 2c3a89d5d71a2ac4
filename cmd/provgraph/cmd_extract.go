package main

import (
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/provgraph/provgraph/internal/extract"
	"github.com/provgraph/provgraph/internal/ingest"
	"github.com/provgraph/provgraph/internal/render"
	"github.com/provgraph/provgraph/internal/service"
)

func newExtractCommand() *cobra.Command {
	var o dbOptions
	var dir string
	cmd := &cobra.Command{
		Use:   "extract [flags]",
		Short: "Derive the content evidence of every captured retrieval again from its WARC capture, without fetching",
		Long: fmt.Sprintf(`Extract reads the WARC capture of every retrieval whose snapshot_ref is a
capture resolve wrote (warc:FILE#OFFSET;<urn:uuid:...>) from the capture
directory, and records a new extraction by the current extractor
(%s) beside the earlier ones, with the passage check of
each of its citations that has cited_text. Nothing is fetched and nothing
stored is replaced. A retrieval this extractor version has extracted from
the same capture already is skipped, so running it twice adds nothing.

--warc DIR is the capture directory; by default the database file's name
with ".warc" added, where resolve writes them.

A capture that is missing or damaged (its digest does not verify) is
named on standard error with its retrieval; nothing is added for it, the
others are extracted all the same, and the exit status is 3.

`, extract.Version) + exitHelp(
			exitLineOK,
			"  2  usage error: bad flag",
			"  3  I/O or internal error, including a missing database file or a capture\n     that could not be read",
			exitLineLocked,
			exitLineCorrupt),
		Example: `  provgraph extract --db example.db
  provgraph extract --db example.db --warc /archive/example.warc`,
		Args: exactArgs(0),
		RunE: func(cmd *cobra.Command, args []string) error {
			if _, err := os.Stat(o.db); err != nil {
				return fmt.Errorf("extract: %w (ingest and resolve citations into it first)", err)
			}
			if dir == "" {
				dir = warcDir(o.db)
			}
			st, err := o.open(false)
			if err != nil {
				return err
			}
			defer st.Close()
			sum, err := ingest.Reextract(cmd.Context(), st.Quads, dir)
			stderr := cmd.ErrOrStderr()
			for _, f := range sum.Failed {
				fmt.Fprintf(stderr, "extract: %s\n", render.EscapeText(f.Error()))
			}
			fmt.Fprintf(stderr, "extract: %s with a capture: %d extracted, %d up to date, %d unreadable; %s (%d found); %s added\n",
				render.Plural(sum.Retrievals, "retrieval"), sum.Extracted, sum.UpToDate, len(sum.Failed),
				render.Plural(sum.Passages, "passage check"), sum.Found, render.Plural(sum.QuadsAdded, "quad"))
			if err != nil {
				return err
			}
			if err := service.KeepRecords(cmd.Context(), st.Quads, stderr, o.db); err != nil {
				return err
			}
			if len(sum.Failed) > 0 {
				return fmt.Errorf("extract: %s could not be read from %s (see above); the others are recorded", render.Plural(len(sum.Failed), "capture"), strings.TrimSuffix(dir, "/"))
			}
			return nil
		},
	}
	o.addFlags(cmd)
	cmd.Flags().StringVar(&dir, "warc", "", "directory of the WARC captures (default: the database file's name with .warc added)")
	return cmd
}
