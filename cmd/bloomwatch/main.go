// Command bloomwatch is a BIP37 SPV light client that syncs a watch-only
// wallet and measures what its bloom filters leak to the full nodes that
// receive them.
//
// Every command is built by a constructor (newRootCmd, newSyncCmd, ...)
// that keeps its flag values in an options struct of its own, so each run
// builds a fresh command tree and no flag state outlives it.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/spf13/cobra"
)

// newRootCmd returns the bloomwatch command with all its subcommands.
func newRootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:           "bloomwatch",
		Short:         "BIP37 SPV light client and bloom filter privacy analyzer",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error {
		return usageError{err}
	})
	root.AddCommand(newSyncCmd(), newDemoCmd(), newWalletCmd(), newFilterCmd(), newMerkleblockCmd(), newPrivacyCmd())
	return root
}

// usageError marks an error caused by bad command-line input; it exits 2.
type usageError struct{ err error }

func (u usageError) Error() string { return u.err.Error() }
func (u usageError) Unwrap() error { return u.err }

// usagef returns a usageError with a formatted message.
func usagef(format string, args ...any) error {
	return usageError{fmt.Errorf(format, args...)}
}

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run executes the command line args on a fresh command tree and returns
// the process exit code: 0 on success, 2 for bad input, 1 for any other
// failure. Errors are printed as a single line on stderr.
func run(args []string, stdout, stderr io.Writer) int {
	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer cancel()

	root := newRootCmd()
	root.SetArgs(args)
	root.SetOut(stdout)
	root.SetErr(stderr)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return 0
	}
	msg := strings.ReplaceAll(err.Error(), "\n", " ")
	fmt.Fprintf(stderr, "bloomwatch: %s\n", msg)
	var ue usageError
	if errors.As(err, &ue) || isCobraUsageError(err) {
		return 2
	}
	return 1
}

// isCobraUsageError recognises cobra's own argument errors, which it
// returns as plain errors.
func isCobraUsageError(err error) bool {
	s := err.Error()
	return strings.HasPrefix(s, "unknown command") ||
		strings.HasPrefix(s, "unknown flag") ||
		strings.HasPrefix(s, "unknown shorthand flag") ||
		strings.Contains(s, "arg(s)") ||
		strings.HasPrefix(s, "required flag")
}

// writeJSON prints v as indented JSON on the command's stdout.
func writeJSON(cmd *cobra.Command, v any) error {
	enc := json.NewEncoder(cmd.OutOrStdout())
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return fmt.Errorf("write json: %w", err)
	}
	return nil
}
