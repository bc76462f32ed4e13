package main

import (
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/bloomwatch/bloomwatch/bip37"
	"github.com/bloomwatch/bloomwatch/privacy/experiments"
	"github.com/btcsuite/btcd/wire"
	"github.com/spf13/cobra"
)

// defaultFilterFPRate is the default --fp of `filter build`: bitcoinj's
// DEFAULT_BLOOM_FILTER_FP_RATE from 17 Jan 2013 (commit a0c25aed2) until
// 21 Apr 2015 (commit eb15ded06 lowered it to 0.00001), the rate of the
// filters the published attacks measured (Gervais et al. 2014; Nick 2015;
// see privacy-literature.md).
const defaultFilterFPRate = experiments.BitcoinjFPRate

// Other defaults of the filter commands.
const (
	defaultFlags = "all"
	defaultTweak = "0"
)

// newFilterCmd returns `bloomwatch filter`, which groups the bloom filter
// tools.
func newFilterCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "filter",
		Short: "Build and query BIP37 bloom filters (Bitcoin Core semantics)",
	}
	cmd.AddCommand(newFilterBuildCmd(), newFilterMatchCmd())
	return cmd
}

// filterBuildOptions holds the flags of `filter build`.
type filterBuildOptions struct {
	n      uint32
	fp     float64
	tweak  string
	flags  string
	asJSON bool
}

// newFilterBuildCmd returns `filter build`, which prints the filterload
// payload for a set of elements.
func newFilterBuildCmd() *cobra.Command {
	o := &filterBuildOptions{}
	cmd := &cobra.Command{
		Use:   "build [flags] HEX...",
		Short: "Build a filter holding the hex elements and print its filterload payload in hex",
		Long: "Build a bloom filter sized as Bitcoin Core sizes it for --n elements at false-positive\n" +
			"rate --fp, insert every HEX element, and print the serialized filter (the filterload\n" +
			"payload) in hex. --n defaults to the number of elements.",
		RunE: o.run,
	}
	f := cmd.Flags()
	f.Uint32Var(&o.n, "n", 0, "number of elements to size the filter for (default: the number of HEX arguments)")
	f.Float64Var(&o.fp, "fp", defaultFilterFPRate, "target false-positive rate, in (0, 1)")
	f.StringVar(&o.tweak, "tweak", defaultTweak, "nTweak, decimal or 0x-prefixed hex uint32")
	f.StringVar(&o.flags, "flags", defaultFlags, "update flags: none, all or p2pubkeyonly")
	f.BoolVar(&o.asJSON, "json", false, "print JSON")
	return cmd
}

// filterMatchOptions holds the flags of `filter match`.
type filterMatchOptions struct {
	filter    string
	outpoints []string
	asJSON    bool
}

// newFilterMatchCmd returns `filter match`, which tests elements and
// outpoints against a serialized filter.
func newFilterMatchCmd() *cobra.Command {
	o := &filterMatchOptions{}
	cmd := &cobra.Command{
		Use:   "match --filter HEX [--outpoint TXID:INDEX]... [HEX...]",
		Short: "Test hex elements and outpoints against a serialized filter",
		RunE:  o.run,
	}
	f := cmd.Flags()
	f.StringVar(&o.filter, "filter", "", "serialized filter (filterload payload) in hex")
	f.StringArrayVar(&o.outpoints, "outpoint", nil, "outpoint TXID:INDEX to test (repeatable)")
	f.BoolVar(&o.asJSON, "json", false, "print JSON")
	return cmd
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

// run implements `filter build`.
func (o *filterBuildOptions) run(cmd *cobra.Command, args []string) error {
	elements, err := decodeElements(args)
	if err != nil {
		return err
	}
	n := o.n
	if !cmd.Flags().Changed("n") {
		n = uint32(len(elements))
	}
	if n == 0 {
		return usagef("filter build: --n must be at least 1 (give it or at least one HEX element)")
	}
	tweak, err := bip37.ParseTweak(o.tweak)
	if err != nil {
		return usagef("--tweak %w", err)
	}
	flags, err := bip37.ParseUpdateFlag(o.flags)
	if err != nil {
		return usagef("filter build: --flags: %w", err)
	}
	f, err := bip37.NewFilter(n, o.fp, tweak, flags)
	if err != nil {
		return usagef("filter build: %w", err)
	}
	for _, e := range elements {
		f.Add(e)
	}
	payload := hex.EncodeToString(f.Serialize())
	if !o.asJSON {
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

// run implements `filter match`.
func (o *filterMatchOptions) run(cmd *cobra.Command, args []string) error {
	if o.filter == "" {
		return usagef("filter match: --filter is required")
	}
	f, err := decodeFilter(o.filter)
	if err != nil {
		return usagef("filter match: --filter: %w", err)
	}
	elements, err := decodeElements(args)
	if err != nil {
		return err
	}
	outpoints := make([]wire.OutPoint, len(o.outpoints))
	for i, s := range o.outpoints {
		op, err := bip37.ParseOutPoint(s)
		if err != nil {
			return usagef("--outpoint %w", err)
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
		results = append(results, matchResult{OutPoint: o.outpoints[i], Match: f.MatchesOutPoint(&outpoints[i])})
	}
	if o.asJSON {
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

// decodeFilter decodes a serialized filter (a filterload payload) given
// in hex.
func decodeFilter(s string) (*bip37.Filter, error) {
	raw, err := decodeHex(s)
	if err != nil {
		return nil, err
	}
	return bip37.Deserialize(raw)
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
