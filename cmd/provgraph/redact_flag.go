package main

import (
	"github.com/spf13/cobra"
)

// Raw URLs are evidence and are stored exactly, credentials included.
// --redact-userinfo hides the credentials in what a command prints
// (render.Redacted); the database is never changed.

// redactUsage is the help line of --redact-userinfo, the same on every
// command that has it.
const redactUsage = `print the userinfo (credentials) of every URL as "user:***" (with a password) or "***"; the database keeps them exactly`

// addRedactFlag adds --redact-userinfo to a command that prints URLs.
func addRedactFlag(cmd *cobra.Command, redact *bool) {
	cmd.Flags().BoolVar(redact, "redact-userinfo", false, redactUsage)
}
