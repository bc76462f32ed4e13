package main

import (
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"

	"github.com/bloomwatch/bloomwatch/bip37"
	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
	"github.com/spf13/cobra"
)

// Defaults of `filter build`.
const (
	defaultFPRate = 0.0005
	defaultFlags  = "all"
	defaultTweak  = "0"
	hexPrefix     = "0x"
	hexBase       = 16
	decimalBase   = 10
	uint32Bits    = 32
	txidHexLen    = 2 * chainhash.HashSize
)

// filterCmd groups the bloom filter tools.
var filterCmd = &cobra.Command{
	Use:   "filter",
	Short: "Build and query BIP37 bloom filters (Bitcoin Core semantics)",
}

// filterBuildOpts holds the flags of `filter build`.
var filterBuildOpts struct {
	n      uint32
	fp     float64
	tweak  string
	flags  string
	asJSON bool
}

// filterBuildCmd prints the filterload payload for a set of elements.
var filterBuildCmd = &cobra.Command{
	Use:   "build [flags] HEX...",
	Short: "Build a filter holding the hex elements and print its filterload payload in hex",
	Long: "Build a bloom filter sized as Bitcoin Core sizes it for --n elements at false-positive\n" +
		"rate --fp, insert every HEX element, and print the serialized filter (the filterload\n" +
		"payload) in hex. --n defaults to the number of elements.",
	RunE: runFilterBuild,
}

// filterMatchOpts holds the flags of `filter match`.
var filterMatchOpts struct {
	filter    string
	outpoints []string
	asJSON    bool
}

// filterMatchCmd tests elements and outpoints against a serialized filter.
var filterMatchCmd = &cobra.Command{
	Use:   "match --filter HEX [--outpoint TXID:INDEX]... [HEX...]",
	Short: "Test hex elements and outpoints against a serialized filter",
	RunE:  runFilterMatch,
}

func init() {
	bf := filterBuildCmd.Flags()
	bf.Uint32Var(&filterBuildOpts.n, "n", 0, "number of elements to size the filter for (default: the number of HEX arguments)")
	bf.Float64Var(&filterBuildOpts.fp, "fp", defaultFPRate, "target false-positive rate, in (0, 1)")
	bf.StringVar(&filterBuildOpts.tweak, "tweak", defaultTweak, "nTweak, decimal or 0x-prefixed hex uint32")
	bf.StringVar(&filterBuildOpts.flags, "flags", defaultFlags, "update flags: none, all or p2pubkeyonly")
	bf.BoolVar(&filterBuildOpts.asJSON, "json", false, "print JSON")

	mf := filterMatchCmd.Flags()
	mf.StringVar(&filterMatchOpts.filter, "filter", "", "serialized filter (filterload payload) in hex")
	mf.StringArrayVar(&filterMatchOpts.outpoints, "outpoint", nil, "outpoint TXID:INDEX to test (repeatable)")
	mf.BoolVar(&filterMatchOpts.asJSON, "json", false, "print JSON")

	filterCmd.AddCommand(filterBuildCmd, filterMatchCmd)
	rootCmd.AddCommand(filterCmd)
}

// filterBuildJSON is the --json output of `filter build`.
type filterBuildJSON struct {
	Hex       string  `json:"hex"`
	Bytes     int     `json:"bytes"`
	HashFuncs uint32  `json:"hash_funcs"`
	Tweak     uint32  `json:"tweak"`
	Flags     string  `json:"flags"`
	Elements  uint32  `json:"elements"`
	FPRate    float64 `json:"fp_rate"`
}

// runFilterBuild implements `filter build`.
func runFilterBuild(cmd *cobra.Command, args []string) error {
	opts := filterBuildOpts
	elements, err := decodeElements(args)
	if err != nil {
		return err
	}
	n := opts.n
	if !cmd.Flags().Changed("n") {
		n = uint32(len(elements))
	}
	if n == 0 {
		return usagef("filter build: --n must be at least 1 (give it or at least one HEX element)")
	}
	tweak, err := parseTweak(opts.tweak)
	if err != nil {
		return err
	}
	flags, err := bip37.ParseUpdateFlag(opts.flags)
	if err != nil {
		return usagef("filter build: --flags: %w", err)
	}
	f, err := bip37.NewFilter(n, opts.fp, tweak, flags)
	if err != nil {
		return usagef("filter build: %w", err)
	}
	for _, e := range elements {
		f.Add(e)
	}
	payload := hex.EncodeToString(f.Serialize())
	if !opts.asJSON {
		_, err := fmt.Fprintln(cmd.OutOrStdout(), payload)
		return err
	}
	return writeJSON(cmd, filterBuildJSON{
		Hex:       payload,
		Bytes:     f.Size(),
		HashFuncs: f.HashFuncs(),
		Tweak:     f.Tweak(),
		Flags:     f.Flags().String(),
		Elements:  n,
		FPRate:    f.FPRate(float64(n)),
	})
}

// matchResult is one line of `filter match` output.
type matchResult struct {
	Element  string `json:"element,omitempty"`
	OutPoint string `json:"outpoint,omitempty"`
	Match    bool   `json:"match"`
}

// runFilterMatch implements `filter match`.
func runFilterMatch(cmd *cobra.Command, args []string) error {
	opts := filterMatchOpts
	if opts.filter == "" {
		return usagef("filter match: --filter is required")
	}
	raw, err := decodeHex(opts.filter)
	if err != nil {
		return usagef("filter match: --filter: %w", err)
	}
	f, err := bip37.Deserialize(raw)
	if err != nil {
		return usagef("filter match: --filter: %w", err)
	}
	elements, err := decodeElements(args)
	if err != nil {
		return err
	}
	outpoints := make([]wire.OutPoint, len(opts.outpoints))
	for i, s := range opts.outpoints {
		op, err := parseOutPoint(s)
		if err != nil {
			return err
		}
		outpoints[i] = op
	}
	if len(elements) == 0 && len(outpoints) == 0 {
		return usagef("filter match: give at least one HEX element or --outpoint")
	}
	results := make([]matchResult, 0, len(elements)+len(outpoints))
	for i, e := range elements {
		results = append(results, matchResult{Element: strings.ToLower(args[i]), Match: f.Matches(e)})
	}
	for i := range outpoints {
		results = append(results, matchResult{OutPoint: opts.outpoints[i], Match: f.MatchesOutPoint(&outpoints[i])})
	}
	if opts.asJSON {
		return writeJSON(cmd, struct {
			Results []matchResult `json:"results"`
		}{results})
	}
	var b strings.Builder
	for _, r := range results {
		name, verdict := r.Element, "no-match"
		if name == "" {
			name = r.OutPoint
		}
		if r.Match {
			verdict = "match"
		}
		fmt.Fprintf(&b, "%s %s\n", name, verdict)
	}
	_, err = fmt.Fprint(cmd.OutOrStdout(), b.String())
	return err
}

// decodeHex decodes a non-empty hex string.
func decodeHex(s string) ([]byte, error) {
	if s == "" {
		return nil, fmt.Errorf("empty hex string")
	}
	b, err := hex.DecodeString(s)
	if err != nil {
		return nil, fmt.Errorf("bad hex %q: %w", s, err)
	}
	return b, nil
}

// decodeElements decodes the HEX arguments, naming the bad one.
func decodeElements(args []string) ([][]byte, error) {
	out := make([][]byte, len(args))
	for i, a := range args {
		b, err := decodeHex(a)
		if err != nil {
			return nil, usagef("element %d: %w", i+1, err)
		}
		out[i] = b
	}
	return out, nil
}

// parseTweak accepts a decimal or 0x-prefixed hexadecimal uint32 (and no
// other base, so a leading zero is not read as octal).
func parseTweak(s string) (uint32, error) {
	digits, base := s, decimalBase
	if strings.HasPrefix(strings.ToLower(s), hexPrefix) {
		digits, base = s[len(hexPrefix):], hexBase
	}
	v, err := strconv.ParseUint(digits, base, uint32Bits)
	if err != nil {
		return 0, usagef("--tweak %q: want a decimal or 0x-hex uint32", s)
	}
	return uint32(v), nil
}

// parseOutPoint parses TXID:INDEX with a 64-hex-digit txid in display order.
func parseOutPoint(s string) (wire.OutPoint, error) {
	txid, index, ok := strings.Cut(s, ":")
	if !ok || len(txid) != txidHexLen {
		return wire.OutPoint{}, usagef("--outpoint %q: want TXID:INDEX with a 64-digit hex txid", s)
	}
	if _, err := hex.DecodeString(txid); err != nil {
		return wire.OutPoint{}, usagef("--outpoint %q: bad txid: %w", s, err)
	}
	h, err := chainhash.NewHashFromStr(txid)
	if err != nil {
		return wire.OutPoint{}, usagef("--outpoint %q: bad txid: %w", s, err)
	}
	i, err := strconv.ParseUint(index, decimalBase, uint32Bits)
	if err != nil {
		return wire.OutPoint{}, usagef("--outpoint %q: bad index: want a decimal uint32", s)
	}
	return wire.OutPoint{Hash: *h, Index: uint32(i)}, nil
}
