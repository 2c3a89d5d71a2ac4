package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/provgraph/provgraph/internal/render"
	"github.com/provgraph/provgraph/internal/service"
	"github.com/spf13/cobra"
)

// Exit statuses. They are listed in the root command's help text, and each
// command's help lists those it can return (TestHelpListsExitStatuses runs
// every command into each status its help lists); keep them in step.
const (
	exitOK       = 0 // everything succeeded
	exitRejected = 1 // input was rejected, in whole or in part
	exitUsage    = 2 // bad flags, arguments, policy file or base URL
	exitFailure  = 3 // an I/O or internal error stopped the command
	exitLocked   = 4 // another process holds the database
	exitCorrupt  = 5 // check found the database inconsistent
)

const exitStatusHelp = `Exit status:
  0  success
  1  input rejected: normalize printed every result but some URLs were
     rejected; ingest found an invalid line (nothing written) or, with
     --skip-invalid, wrote the valid lines and listed the others; lineage
     found no such citation
  2  usage error: bad flag, argument, policy file or base URL
  3  I/O or internal error
  4  the database is locked by another process (see --lock-timeout)
  5  the database is inconsistent or damaged: check found it so, or another
     command met damage while reading it
Each command's --help lists the statuses it returns.`

// Lines of a command's "Exit status:" help, for exitHelp. Each command
// lists only the statuses it can return, with its own words for 1 and 2.
const (
	exitLineOK      = "  0  success"
	exitLineFailure = "  3  I/O or internal error"
	exitLineLocked  = "  4  the database is locked by another process (see --lock-timeout)"
	exitLineCorrupt = "  5  the database is damaged: reading it met an inconsistency (run\n     'provgraph check' on it)"
)

// exitHelp formats a command's "Exit status:" help block from its lines.
func exitHelp(lines ...string) string {
	return "Exit status:\n" + strings.Join(lines, "\n")
}

// usagef marks an error as the user's to fix (exit status 2); the error
// kinds are internal/service's (UsageError, InputError, InterruptError,
// ErrRejected), shared with any other front end.
func usagef(format string, args ...any) error {
	return service.Usagef(format, args...)
}

// Run executes the provgraph command line in args and returns the exit
// status. All output goes to the given writers, so tests run it in-process.
func Run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	root := newRootCommand(stdin)
	root.SetArgs(args)
	out := &outputWriter{w: stdout}
	root.SetOut(out)
	root.SetErr(stderr)
	cmd, err := root.ExecuteContextC(ctx)
	path := root.CommandPath()
	if cmd != nil {
		path = cmd.CommandPath()
	}
	var ie service.InterruptError
	if service.IsInterrupt(ctx, err) && !errors.As(err, &ie) {
		err = service.InterruptError{Err: err}
	}
	if err == nil && out.err != nil {
		err = fmt.Errorf("write standard output: %w", out.err)
	}
	return exitCode(nameDatabase(cmd, err), path, stderr)
}

// nameDatabase makes sure that an error saying the database is damaged
// names its file: the store's errors do, but query code may return one it
// found in what it read.
func nameDatabase(cmd *cobra.Command, err error) error {
	if cmd == nil || service.Classify(err) != service.Damaged {
		return err
	}
	if f := cmd.Flags().Lookup("db"); f != nil && !strings.Contains(err.Error(), f.Value.String()) {
		return fmt.Errorf("%s: %w", f.Value.String(), err)
	}
	return err
}

// outputWriter keeps the first error of a write to standard output, so
// that output that could not be written (a full disk, > /dev/full) fails
// the command (exit status 3) whichever command wrote it, and however it
// did: many write with fmt.Fprintf, or through a bufio.Writer, and
// help output is cobra's. Once a write failed, every later one fails at
// once.
type outputWriter struct {
	w   io.Writer
	err error
}

func (o *outputWriter) Write(p []byte) (int, error) {
	if o.err != nil {
		return 0, o.err
	}
	n, err := o.w.Write(p)
	if err == nil && n < len(p) {
		err = io.ErrShortWrite
	}
	o.err = err
	return n, err
}

// exitCode maps an error to the exit status, printing it first; a usage
// error ends with the help hint of the command that failed, named by path.
// This is the one place where errors become exit statuses: the kinds are
// service.Classify's, which an HTTP handler maps to its statuses too.
func exitCode(err error, path string, stderr io.Writer) int {
	stderr = render.EscapingWriter{W: stderr}
	kind := service.Classify(err)
	if kind == service.Internal && isCobraUsage(err) {
		kind = service.Usage
	}
	var ir service.InterruptError
	switch kind {
	case service.OK:
		return exitOK
	case service.Interrupted:
		if errors.As(err, &ir); !ir.Said {
			fmt.Fprintln(stderr, "provgraph: interrupted")
		}
		return exitFailure
	case service.Rejected:
		// A command that returns ErrRejected has listed what it rejected.
		if !errors.Is(err, service.ErrRejected) {
			fmt.Fprintf(stderr, "provgraph: %v\n", err)
		}
		return exitRejected
	case service.Locked:
		fmt.Fprintf(stderr, "provgraph: %v\n", err)
		return exitLocked
	case service.Damaged:
		fmt.Fprintf(stderr, "provgraph: %v\n", err)
		return exitCorrupt
	case service.Usage:
		fmt.Fprintf(stderr, "provgraph: %v\nRun '%s --help' for usage.\n", err, path)
		return exitUsage
	default:
		fmt.Fprintf(stderr, "provgraph: %v\n", err)
		return exitFailure
	}
}

// isCobraUsage recognises the errors cobra returns for unknown commands and
// flags, which are not typed.
func isCobraUsage(err error) bool {
	var fe flagError
	return errors.As(err, &fe) || strings.HasPrefix(err.Error(), "unknown command ")
}

// flagError wraps cobra's flag parsing errors so exitCode can classify them.
type flagError struct{ error }

func (e flagError) Unwrap() error { return e.error }

func newRootCommand(stdin io.Reader) *cobra.Command {
	root := &cobra.Command{
		Use:   "provgraph",
		Short: "Provenance store for URLs cited by AI answer engines",
		Long: `provgraph keeps three values of every cited URL apart: the raw URL exactly as
the answer engine showed it, the URL resolved by retrieval, and a comparison
key made by a documented, versioned normalization policy that logs each step.
A matching key is a reason to review two citations together, never proof that
they are the same resource.

` + exitStatusHelp,
		SilenceUsage:  true,
		SilenceErrors: true,
		Version:       version(),
	}
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return flagError{err} })
	root.AddCommand(newNormalizeCommand(stdin))
	root.AddCommand(newIngestCommand(stdin))
	root.AddCommand(newGroupsCommand())
	root.AddCommand(newQueueCommand())
	root.AddCommand(newStatsCommand())
	root.AddCommand(newRenormalizeCommand())
	root.AddCommand(newPolicyDiffCommand())
	root.AddCommand(newPolicyCommand())
	root.AddCommand(newExportCommand())
	root.AddCommand(newLineageCommand())
	root.AddCommand(newResolveCommand())
	root.AddCommand(newExtractCommand())
	root.AddCommand(newCheckCommand())
	root.AddCommand(newConvertCommand())
	root.AddCommand(newCompactCommand())
	root.AddCommand(newVacuumCommand())
	root.AddCommand(newReviewCommand())
	root.AddCommand(newServeCommand())
	root.AddCommand(newQueryCommand())
	root.AddCommand(newViewCommand())
	return root
}
