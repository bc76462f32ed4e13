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
	"runtime/debug"
	"strings"
	"syscall"

	"github.com/bloomwatch/bloomwatch/internal/peertext"
	"github.com/bloomwatch/bloomwatch/internal/progress"
	"github.com/spf13/cobra"
)

// newRootCmd returns the bloomwatch command with all its subcommands.
func newRootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:           "bloomwatch",
		Short:         "BIP37 SPV light client and bloom filter privacy analyzer",
		Version:       version(debug.ReadBuildInfo()),
		Long:          "BIP37 SPV light client and bloom filter privacy analyzer.\n\n" + configHelp,
		SilenceUsage:  true,
		SilenceErrors: true,
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error {
			return resolveDatadir(cmd)
		},
	}
	root.SetVersionTemplate("bloomwatch {{.Version}}\n")
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error {
		return usageError{err}
	})
	root.AddCommand(newSyncCmd(), newDashboardCmd(), newBroadcastCmd(), newDemoCmd(), newWalletCmd(), newFilterCmd(), newMerkleblockCmd(), newPrivacyCmd())
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
	cmd, err := root.ExecuteContextC(ctx)
	if err == nil {
		return 0
	}
	fmt.Fprintln(stderr, errorLine(cmd, err))
	var ue usageError
	if errors.As(err, &ue) || isCobraUsageError(err) {
		return 2
	}
	return 1
}

// errorLine is the one line an error prints: "bloomwatch: " and the
// command's name ("filter build: ..."), whatever the path that made the
// error named, so every error of a command starts the same way (some
// named only a flag: "bloomwatch: element 1: bad hex"), on one line:
// newlines become spaces, and what a peer or a file put in it (a reject
// reason's CR, ESC and OSC sequences, invalid UTF-8) is escaped and the
// line capped by peertext.Clean.
func errorLine(cmd *cobra.Command, err error) string {
	msg := peertext.Clean(strings.ReplaceAll(err.Error(), "\n", " "), peertext.LineMax)
	if cmd != nil && cmd.HasParent() {
		name := strings.TrimPrefix(cmd.CommandPath(), cmd.Root().Name()+" ")
		if !strings.HasPrefix(msg, name+":") {
			msg = name + ": " + msg
		}
	}
	return "bloomwatch: " + msg
}

// revision is the VCS revision stamped at link time for a build that
// records none itself (-buildvcs=false, a tarball without .git):
// go build -ldflags "-X main.revision=$(git rev-parse HEAD)".
var revision string

// version describes the running binary from its build information: the
// module version (a tag, a pseudo-version, or "(devel)" for a build in
// the source tree) and, when the build recorded it, the VCS revision, its
// time and whether the tree had uncommitted changes; else the revision
// stamped with -ldflags, else "revision unknown" and how to stamp one.
func version(bi *debug.BuildInfo, ok bool) string {
	if !ok || bi == nil {
		return "(unknown: no build information)"
	}
	v := bi.Main.Version
	if v == "" {
		v = "(devel)"
	}
	var rev, at string
	modified := false
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.time":
			at = s.Value
		case "vcs.modified":
			modified = s.Value == "true"
		}
	}
	if rev != "" {
		v += " revision " + rev
		if modified {
			v += " (modified)"
		}
		if at != "" {
			v += " of " + at
		}
	} else if revision != "" {
		v += " revision " + revision + " (stamped at link time)"
	} else {
		v += " revision unknown (no VCS revision recorded: go run, go test and -buildvcs=false record none; stamp one with -ldflags \"-X main.revision=$(git rev-parse HEAD)\")"
	}
	if bi.GoVersion != "" {
		v += ", " + bi.GoVersion
	}
	return v
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

// writeJSON prints v as JSON on the command's stdout, one document
// ending in a newline: indented for a person when stdout is a terminal,
// compact for a program otherwise (a pipe or a file; `jq .` indents it),
// as gh does. Indenting a sync summary of thousands of
// transactions costs more CPU than encoding it and a second copy of it in
// memory, which a script reading it has no use for.
func writeJSON(cmd *cobra.Command, v any) error {
	out := cmd.OutOrStdout()
	enc := json.NewEncoder(out)
	if progress.IsTerminal(out) {
		enc.SetIndent("", "  ")
	}
	if err := enc.Encode(v); err != nil {
		return fmt.Errorf("write json: %w", err)
	}
	return nil
}
