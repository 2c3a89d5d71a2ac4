package main

import (
	"fmt"

	"github.com/provgraph/provgraph/internal/normalize"
	"github.com/provgraph/provgraph/internal/render"
	"github.com/provgraph/provgraph/internal/service"
	"github.com/spf13/cobra"
)

func newPolicyCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "policy",
		Short: "Show or check normalization policies",
		Long: `A policy is a TOML file that decides, for every rule of the normalization
sequence, whether it applies or rejects the input (or, for the policy's own
steps, is off); which ports are default; which query parameters are
tracking-only, each with its reason; and which hosts have server-defined
equivalences. Its name, version and digest are reported with every result.

Two policies are built in: "default" (strict: every URL Standard validation
error rejects the input) and "lenient" (every validation error is tolerated
and logged). Start your own from one of them:

  provgraph policy show default > my-policy.toml

` + exitHelp(
			"  0  this help was printed",
			"  2  usage error: no such policy subcommand, or a bad flag"),
		// Without this, cobra prints the help and exits 0 for a misspelt
		// subcommand ("policy chek").
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return cmd.Help()
			}
			hint := ""
			cmd.SuggestionsMinimumDistance = 2
			if s := cmd.SuggestionsFor(args[0]); len(s) > 0 {
				hint = fmt.Sprintf(" (did you mean %q?)", s[0])
			}
			return usagef("unknown command %q for %q%s", args[0], cmd.CommandPath(), hint)
		},
	}
	cmd.AddCommand(&cobra.Command{
		Use:   "show [default|lenient]",
		Short: "Print a built-in policy file",
		Long: `Show prints a built-in policy file ("default" when no name is given; names
in any letter case), to start a policy of your own from.

` + exitHelp(
			"  0  the policy was printed",
			"  2  usage error: no built-in policy of that name, or a bad flag",
			"  3  I/O error writing the output"),
		Args: maxArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			name := normalize.DefaultPolicyName
			if len(args) == 1 {
				name = args[0]
			}
			data, err := normalize.BuiltinPolicy(name)
			if err != nil {
				return service.UsageError{Err: err}
			}
			_, err = cmd.OutOrStdout().Write(data)
			return err
		},
	})
	cmd.AddCommand(&cobra.Command{
		Use:   "check POLICY",
		Short: "Validate a policy and print its name, version, digest and rules",
		Long: `Check loads a policy ("default", "lenient" or a TOML file of at most 1 MiB),
reports the first problem with the line of the key concerned when there is
one (with the nearest name for a misspelt rule or key, and the type a key
takes), and otherwise prints the identity that every result will carry and
the action of each rule in sequence order.

` + exitHelp(
			"  0  the policy is valid; its identity and rules were printed",
			"  2  the policy is missing or invalid (the error names the line), or a\n     bad flag or argument",
			"  3  I/O error writing the output"),
		Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			p, err := service.LoadPolicy(args[0])
			if err != nil {
				return err
			}
			return render.PolicyCheck(cmd.OutOrStdout(), p)
		},
	})
	return cmd
}

func exactArgs(n int) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) != n {
			return usagef("%s takes %d argument(s), got %d", cmd.CommandPath(), n, len(args))
		}
		return nil
	}
}

func maxArgs(n int) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) > n {
			return usagef("%s takes at most %d argument(s), got %d", cmd.CommandPath(), n, len(args))
		}
		return nil
	}
}
