package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/provgraph/provgraph/internal/graph"

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

// usageError marks an error as the user's to fix (exit status 2).
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

func usagef(format string, args ...any) error {
	return usageError{fmt.Errorf(format, args...)}
}

// inputError marks an error in the user's input data (exit status 1).
type inputError struct{ err error }

func (e inputError) Error() string { return e.err.Error() }
func (e inputError) Unwrap() error { return e.err }

// interruptError is the error of a command stopped by an interrupt: Ctrl-C
// cancels the context of Run. said is set by a command that has already
// printed where it stopped and what was kept (ingest, resolve, normalize);
// exitCode then adds nothing, and otherwise prints "provgraph:
// interrupted" instead of the internal "context canceled". Either way the
// exit status is 3.
type interruptError struct {
	err  error
	said bool
}

func (e interruptError) Error() string { return e.err.Error() }
func (e interruptError) Unwrap() error { return e.err }

// interrupted reports whether err is the cancellation of ctx: its error
// or its cause (signal.NotifyContext's "interrupt signal received").
func interrupted(ctx context.Context, err error) bool {
	return err != nil && ctx.Err() != nil && (errors.Is(err, context.Canceled) || errors.Is(err, context.Cause(ctx)))
}

// errRejected reports that a command finished but rejected some inputs.
var errRejected = errors.New("some inputs were rejected")

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
	var ie interruptError
	if interrupted(ctx, err) && !errors.As(err, &ie) {
		err = interruptError{err: err}
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
	if cmd == nil || !errors.Is(err, graph.ErrCorrupt) {
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
// This is the one place where errors become exit statuses.
func exitCode(err error, path string, stderr io.Writer) int {
	stderr = escapingWriter{stderr}
	var ue usageError
	var ie inputError
	var ir interruptError
	switch {
	case err == nil:
		return exitOK
	case errors.As(err, &ir):
		if !ir.said {
			fmt.Fprintln(stderr, "provgraph: interrupted")
		}
		return exitFailure
	case errors.Is(err, errRejected):
		return exitRejected
	case errors.As(err, &ie):
		fmt.Fprintf(stderr, "provgraph: %v\n", err)
		return exitRejected
	case errors.Is(err, graph.ErrLocked):
		fmt.Fprintf(stderr, "provgraph: %v\n", err)
		return exitLocked
	case errors.Is(err, graph.ErrCorrupt):
		fmt.Fprintf(stderr, "provgraph: %v\n", err)
		return exitCorrupt
	case errors.As(err, &ue), isCobraUsage(err):
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
	return root
}
