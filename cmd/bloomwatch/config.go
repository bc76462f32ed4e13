package main

// This file resolves the data dir a command works on and reads the
// optional configuration file in it, as btcd and lnd do: --datadir, else
// $BLOOMWATCH_DATADIR, else ~/.bloomwatch/NETWORK; then DATADIR/bloomwatch.conf,
// whose key = value lines set the flags the command line left unset.

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/bloomwatch/bloomwatch/internal/boundedread"
	"github.com/bloomwatch/bloomwatch/netparams"
)

// DatadirEnv names the environment variable that gives the data dir when
// --datadir is not set.
const DatadirEnv = "BLOOMWATCH_DATADIR"

// ConfigFile is the configuration file's name in the data dir.
const ConfigFile = "bloomwatch.conf"

// homeDirName is the directory under the user's home that holds one
// default data dir per network (~/.bloomwatch/regtest, as ~/.bitcoin/regtest).
const homeDirName = ".bloomwatch"

// defaultNetwork is the network whose default data dir a command without
// --network uses (bitcoind's and lnd's default).
const defaultNetwork = "mainnet"

// datadirAnnotation marks the --datadir flags that take the default data
// dir and the configuration file (registerDatadir's, not the demo's).
const datadirAnnotation = "bloomwatch_default_datadir"

// registerDatadir adds --datadir, stored in p, and, when the command has
// no --network of its own yet, the --network that names the default data
// dir (a command that creates wallets registers its --network first).
func registerDatadir(fs *pflag.FlagSet, p *string) {
	fs.StringVar(p, "datadir", "", "wallet data directory (default: $"+DatadirEnv+", else ~/"+homeDirName+"/NETWORK)")
	_ = fs.SetAnnotation("datadir", datadirAnnotation, []string{"1"})
	if fs.Lookup("network") == nil {
		fs.String("network", "", "network of the default data dir ~/"+homeDirName+"/NETWORK, when neither --datadir nor $"+DatadirEnv+" is given (default "+defaultNetwork+")")
	}
}

// defaultDatadir returns the data dir of a network: ~/.bloomwatch/NAME,
// NAME the network's canonical name (testnet: testnet3).
func defaultDatadir(network string) (string, error) {
	if network == "" {
		network = defaultNetwork
	}
	n, err := netparams.Lookup(network)
	if err != nil {
		return "", err
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(home, homeDirName, n.Name), nil
}

// resolveDatadir sets the --datadir of cmd, when it takes the default and
// the command line left it unset, from $BLOOMWATCH_DATADIR or the default
// data dir of --network, then applies the data dir's configuration file.
// A network that does not resolve, or no home directory, leaves --datadir
// empty: the command then says what it requires.
func resolveDatadir(cmd *cobra.Command) error {
	fs := cmd.Flags()
	f := fs.Lookup("datadir")
	if f == nil || f.Annotations[datadirAnnotation] == nil {
		return nil
	}
	if !f.Changed {
		dir := os.Getenv(DatadirEnv)
		if dir == "" {
			network := ""
			if n := fs.Lookup("network"); n != nil {
				network = n.Value.String()
			}
			dir, _ = defaultDatadir(network)
		}
		if dir == "" {
			return nil
		}
		if err := f.Value.Set(dir); err != nil {
			return err
		}
	}
	return applyConfig(cmd, filepath.Join(f.Value.String(), ConfigFile))
}

// applyConfig reads the configuration file at path, if there is one: one
// "key = value" per line, key a long flag name of any bloomwatch command;
// blank lines, lines starting with # or ;, and [section] headers (btcd's
// [Application Options]) are skipped. A key of the running command sets
// its flag unless the command line set it (a repeatable flag takes one
// line per value); other commands' keys are skipped, so one file serves
// every command. A line that is not key = value, a key no command has, a
// datadir key or a value the flag refuses is an error naming the file and
// line.
func applyConfig(cmd *cobra.Command, path string) error {
	data, err := boundedread.ReadFile(path, maxConfigFileBytes, "maxConfigFileBytes")
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		return usagef("config file: %w", err)
	}
	known := allFlagNames(cmd.Root())
	fs := cmd.Flags()
	sc := bufio.NewScanner(bytes.NewReader(data))
	for line := 1; sc.Scan(); line++ {
		text := strings.TrimSpace(sc.Text())
		if text == "" || text[0] == '#' || text[0] == ';' || text[0] == '[' && text[len(text)-1] == ']' {
			continue
		}
		key, value, ok := strings.Cut(text, "=")
		key, value = strings.TrimSpace(key), strings.TrimSpace(value)
		if !ok || key == "" {
			return usagef("%s:%d: want key = value, got %q", path, line, text)
		}
		if key == "datadir" {
			return usagef("%s:%d: datadir cannot be set in the data dir's own file (use --datadir or $%s)", path, line, DatadirEnv)
		}
		if !known[key] {
			return usagef("%s:%d: unknown option %q (no bloomwatch command has a --%s flag)", path, line, key, key)
		}
		f := fs.Lookup(key)
		if f == nil || f.Changed {
			continue
		}
		if err := f.Value.Set(value); err != nil {
			return usagef("%s:%d: %s = %q: %w", path, line, key, value, err)
		}
	}
	if err := sc.Err(); err != nil {
		return usagef("config file %s: %w", path, err)
	}
	return nil
}

// allFlagNames returns the long flag names of every command under root.
func allFlagNames(root *cobra.Command) map[string]bool {
	names := map[string]bool{}
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		c.Flags().VisitAll(func(f *pflag.Flag) { names[f.Name] = true })
		c.PersistentFlags().VisitAll(func(f *pflag.Flag) { names[f.Name] = true })
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
	return names
}

// configHelp is the root command's description of the data dir and the
// configuration file.
var configHelp = fmt.Sprintf(`Data dir: --datadir, else $%s, else ~/%s/NETWORK (--network, default %s),
as ~/.bitcoin and ~/.lnd. An optional %s in the data dir sets flags the command
line leaves unset, one "key = value" per line (# comments; connect = 127.0.0.1:18444
on several lines for a repeatable flag).`, DatadirEnv, homeDirName, defaultNetwork, ConfigFile)
