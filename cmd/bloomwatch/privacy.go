package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/bloomwatch/bloomwatch/internal/atomicfile"
	"github.com/bloomwatch/bloomwatch/internal/boundedread"
	"github.com/bloomwatch/bloomwatch/internal/progress"
	"github.com/bloomwatch/bloomwatch/privacy"
	"github.com/bloomwatch/bloomwatch/privacy/btcdrpc"
	"github.com/bloomwatch/bloomwatch/privacy/plot"
	"github.com/bloomwatch/bloomwatch/privacy/replay"
	"github.com/bloomwatch/bloomwatch/transcript"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// newPrivacyCmd returns `bloomwatch privacy`, which groups the privacy
// analyzer's commands.
func newPrivacyCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "privacy",
		Short: "Measure what BIP37 filters leak to the full nodes that receive them",
	}
	cmd.AddCommand(newPrivacyAnalyzeCmd(), newPrivacyExperimentCmd(), newPrivacyScanCmd(), newPrivacyExportCmd())
	return cmd
}

// privacyAnalyzeOptions holds the flags of `privacy analyze`.
type privacyAnalyzeOptions struct {
	transcript      string
	bip158          string
	universe        string
	synthetic       uint64
	pubKeys         bool
	seed            uint64
	rpc             string
	rpcUser         string
	rpcPass         string
	height          int32
	truth           string
	attacks         string
	asJSON          bool
	csv             string
	fullTable       bool
	png             string
	workers         int
	saturationEvery int32
	maxHits         int
	outpoints       bool
	serverRules     string
}

// newPrivacyAnalyzeCmd returns `privacy analyze`, which analyzes a
// transcript.
func newPrivacyAnalyzeCmd() *cobra.Command {
	o := &privacyAnalyzeOptions{}
	cmd := &cobra.Command{
		Use:   "analyze --transcript F (--universe F | --btcd-rpc HOST:PORT --rpcuser U --rpcpass P [--height H] | --synthetic N) [--truth F]",
		Short: "Replay a filter transcript as a colluding full node would and print the collapse curve",
		Long: "Replay every filterload, filteradd and filterclear of the transcript, test every candidate of the\n" +
			"universe against every filter, and print the adversary's set after each event: its size, the\n" +
			"false positives measured (with --truth) and expected, precision, recall and entropy, for each\n" +
			"attack stage. Universe and truth files hold one candidate per line, its forms in hex separated\n" +
			"by spaces (primary form first, e.g. HASH160 PUBKEY), with # comments; a universe file is streamed,\n" +
			"never held in memory, and must list each candidate once (privacy export-universe writes one).\n" +
			"A synthetic universe holds\n" +
			"N pseudorandom candidates; the truth is then added to it (it cannot contain the wallet).\n" +
			"--attacks is a comma list of both-forms, intersection, graph, saturation, behaviour, or all, none,\n" +
			"auto (auto: both-forms and intersection, plus graph, saturation and behaviour when a chain is read\n" +
			"over RPC). behaviour (needs --btcd-rpc) is the timing attack: each peer's side (the blocks it served,\n" +
			"the transactions its filter matched, mempool relays of new blocks) is rebuilt from the getdata records\n" +
			"and the chain; every reload that added elements points at the peer's last sending with a transaction,\n" +
			"every run asked again at its first block with one; with --truth each suspect list is scored against\n" +
			"the base rate (the wallet's share of the candidates the filter left), with 95 % intervals.\n" +
			"--server-rules says how the peers filtered (core: Bitcoin Core and bcoin; btcd also tests empty\n" +
			"pushes), for the stages that replay a peer's filter over the chain (saturation, behaviour).\n" +
			"--outpoints (with --btcd-rpc) tests the two-form attack on outpoints: each candidate is a script\n" +
			"push plus the outpoints of its outputs unspent at --height (default: the last filterload's\n" +
			"height), which a BLOOM_UPDATE_ALL wallet inserts beside the push; both-forms then requires all.\n" +
			"A bad transcript (malformed or truncated record, a filter over 36,000 bytes or 50 hash\n" +
			"functions, an unknown kind) exits 2 naming the record, and writes no --csv or --png file.",
		Args: cobra.NoArgs,
		RunE: o.run,
	}
	f := cmd.Flags()
	f.StringVar(&o.transcript, "transcript", "", "transcript file (JSON lines of privacy records)")
	f.StringVar(&o.universe, "universe", "", "element file of candidates")
	f.Uint64Var(&o.synthetic, "synthetic", 0, "synthetic universe of N candidates")
	f.BoolVar(&o.pubKeys, "pubkeys", false, "synthetic candidates carry a public-key form too")
	f.Uint64Var(&o.seed, "seed", 1, "seed of the synthetic universe")
	f.StringVar(&o.rpc, "btcd-rpc", "", "read the chain from a btcd JSON-RPC server on the loopback HOST:PORT")
	f.StringVar(&o.rpcUser, "rpcuser", "", "btcd RPC user")
	f.StringVar(&o.rpcPass, "rpcpass", "", "btcd RPC password")
	f.Int32Var(&o.height, "height", -1, "universe up to this height (default: the tip)")
	f.StringVar(&o.truth, "truth", "", "element file of the wallet's real elements, to score the attack")
	f.StringVar(&o.attacks, "attacks", privacy.AttacksAuto, "attack stages to run (see above)")
	f.BoolVar(&o.asJSON, "json", false, "print the report as JSON")
	f.StringVar(&o.csv, "csv", "", "write every curve point to this CSV file")
	f.BoolVar(&o.fullTable, "full-table", false, fmt.Sprintf("print every row of each table (default: %d, the first ones and the last)", privacy.DefaultTableRows))
	f.StringVar(&o.png, "png", "", "draw the collapse curves to this PNG file (and its caption to NAME.caption.txt beside it)")
	f.IntVar(&o.workers, "workers", 0, "scan goroutines (default: all CPUs)")
	f.Int32Var(&o.saturationEvery, "saturation-every", 1, "one saturation point per this many blocks")
	f.IntVar(&o.maxHits, "max-hits", privacy.DefaultMaxHits, "most matching candidates kept")
	f.BoolVar(&o.outpoints, "outpoints", false, "candidates carry their unspent outpoints as further forms (needs --btcd-rpc)")
	f.StringVar(&o.bip158, "bip158-transcript", "", "the transcript of a BIP158 sync of the same wallet: its block requests are analyzed beside the BIP37 figures (needs --btcd-rpc)")
	f.StringVar(&o.serverRules, "server-rules", privacy.ServerRulesCore, "relevance rules the peers filtered with, for saturation and behaviour: core (Bitcoin Core, bcoin) or btcd")
	return cmd
}

// run implements `privacy analyze`.
func (o *privacyAnalyzeOptions) run(cmd *cobra.Command, _ []string) error {
	if err := o.check(cmd.Flags()); err != nil {
		return err
	}
	attacks, err := privacy.ParseAttacks(o.attacks, o.rpc != "")
	if errors.Is(err, privacy.ErrAttackNeedsChain) {
		return usagef("--attacks: %w: use --btcd-rpc", err)
	}
	if err != nil {
		return usagef("--attacks: %w", err)
	}
	ctx := cmd.Context()
	records, err := readTranscriptFile(o.transcript)
	if err != nil {
		return err
	}
	records, cfRecs, err := o.splitBIP158(records)
	if err != nil {
		return err
	}
	if len(cfRecs) > 0 && len(transcript.FilterRecords(records)) == 0 {
		return o.runBIP158Only(cmd, cfRecs)
	}
	rules, _ := privacy.ParseServerRules(o.serverRules) // checked
	in := privacy.Input{Records: records, Attacks: attacks, Workers: o.workers, MaxHits: o.maxHits, SaturationEvery: o.saturationEvery,
		ServerRules: rules}
	if o.truth != "" {
		if in.Truth, err = readElementFile("--truth", o.truth); err != nil {
			return err
		}
	}
	switch {
	case o.universe != "":
		// Streamed, never held: a mainnet universe does not fit in
		// memory. A malformed line fails the scan, naming the line.
		f, err := openInput("--universe", o.universe)
		if err != nil {
			return err
		}
		defer f.Close()
		in.Universe = privacy.NewFileUniverse(f)
		in.UniverseSource = "element file " + o.universe
	case o.synthetic > 0:
		in.Universe = privacy.Stream(privacy.Synthetic{Seed: o.seed, Count: o.synthetic, PubKeys: o.pubKeys})
		in.TruthOnChain = true
		in.UniverseSource = fmt.Sprintf("synthetic, seed %d: every match not in --truth is a false positive", o.seed)
	default:
		chain, err := dialChain(o.rpc, o.rpcUser, o.rpcPass, o.height)
		if err != nil {
			return err
		}
		defer chain.Close()
		var u privacy.SliceUniverse
		if o.outpoints {
			at := o.height
			if !cmd.Flags().Changed("height") {
				at = privacy.LastLoadHeight(records)
			}
			u, err = privacy.ChainOutpointUniverse(ctx, chain, at)
			in.UniverseSource = fmt.Sprintf("chain over btcd RPC %s up to height %d (-1: tip), each push with its outpoints unspent there", o.rpc, at)
		} else {
			u, err = privacy.ChainUniverse(ctx, chain, o.height)
			in.UniverseSource = fmt.Sprintf("chain over btcd RPC %s up to height %d (-1: tip)", o.rpc, o.height)
		}
		if err != nil {
			return fmt.Errorf("privacy analyze: %w", err)
		}
		in.Universe, in.Chain = privacy.Stream(u), chain
	}
	rep, err := privacy.Analyze(ctx, in)
	if err != nil {
		return analyzeErr(err, o.transcript)
	}
	if len(cfRecs) > 0 {
		if rep.BIP158, err = privacy.AnalyzeBlockRequests(ctx, cfRecs, in.Chain, in.Truth, o.height); err != nil {
			return fmt.Errorf("privacy analyze: bip158: %w", err)
		}
	}
	// Every output file is rendered before any is written, and each is
	// written whole or not at all.
	var outs []atomicfile.Data
	if o.csv != "" {
		var b bytes.Buffer
		if err := privacy.WriteCSV(&b, rep.Curves); err != nil {
			return fmt.Errorf("privacy analyze: --csv: %w", err)
		}
		outs = append(outs, atomicfile.Data{Path: o.csv, Data: b.Bytes()})
	}
	if o.png != "" {
		png, err := plot.Render(plot.PNG, rep.Charts())
		if err != nil {
			return fmt.Errorf("privacy analyze: --png: %w", err)
		}
		outs = append(outs, atomicfile.Data{Path: o.png, Data: png},
			atomicfile.Data{Path: captionPath(o.png), Data: []byte(plot.Caption(rep.Charts()))})
	}
	if err := atomicfile.WriteAll(outs, outputFileMode); err != nil {
		return fmt.Errorf("privacy analyze: %w", err)
	}
	if o.asJSON {
		return writeJSON(cmd, rep)
	}
	if o.fullTable {
		if err := rep.WriteTableRows(cmd.OutOrStdout(), 0); err != nil {
			return err
		}
	} else if err := rep.WriteTable(cmd.OutOrStdout()); err != nil {
		return err
	}
	if rep.BIP158 != nil {
		fmt.Fprintln(cmd.OutOrStdout())
		return rep.BIP158.WriteTable(cmd.OutOrStdout(), rep)
	}
	return nil
}

// check enforces one universe source and the flags that go with it.
func (o *privacyAnalyzeOptions) check(fl *pflag.FlagSet) error {
	if o.transcript == "" {
		return usagef("privacy analyze: --transcript is required")
	}
	sources := 0
	for _, set := range []bool{o.universe != "", fl.Changed("synthetic"), o.rpc != ""} {
		if set {
			sources++
		}
	}
	if sources != 1 {
		return usagef("privacy analyze: give exactly one of --universe, --btcd-rpc or --synthetic")
	}
	if fl.Changed("synthetic") && o.synthetic == 0 {
		return usagef("privacy analyze: --synthetic must be at least 1")
	}
	if o.rpc != "" && (o.rpcUser == "" || o.rpcPass == "") {
		return usagef("privacy analyze: --btcd-rpc needs --rpcuser and --rpcpass")
	}
	if o.rpc == "" && (fl.Changed("height") || fl.Changed("rpcuser") || fl.Changed("rpcpass")) {
		return usagef("privacy analyze: --height, --rpcuser and --rpcpass go with --btcd-rpc")
	}
	if !fl.Changed("synthetic") && (fl.Changed("pubkeys") || fl.Changed("seed")) {
		return usagef("privacy analyze: --pubkeys and --seed go with --synthetic")
	}
	if o.bip158 != "" && o.rpc == "" {
		return usagef("privacy analyze: --bip158-transcript needs the chain: use --btcd-rpc")
	}
	if o.outpoints && o.rpc == "" {
		return usagef("privacy analyze: --outpoints needs the chain: use --btcd-rpc")
	}
	if _, err := privacy.ParseServerRules(o.serverRules); err != nil {
		return usagef("privacy analyze: --server-rules %q: want core or btcd", o.serverRules)
	}
	if o.saturationEvery < 1 || o.maxHits < 1 || o.workers < 0 {
		return usagef("privacy analyze: --saturation-every and --max-hits must be positive, --workers not negative")
	}
	return nil
}

// analyzeErr names the command in the analyzer's errors, and an
// interruption as one. A transcript the analyzer cannot replay (no
// filterload, a filter a node would reject) is bad input, named by its
// path: exit 2.
func analyzeErr(err error, transcriptPath string) error {
	switch {
	case errors.Is(err, context.Canceled):
		return fmt.Errorf("privacy analyze: interrupted: %w", err)
	case errors.Is(err, replay.ErrNoFilters), errors.Is(err, replay.ErrBadFilterRecord), errors.Is(err, transcript.ErrBad):
		return usagef("privacy analyze: --transcript %s: %w", transcriptPath, err)
	case errors.Is(err, privacy.ErrBadElementFile):
		return usagef("privacy analyze: --universe: %w", err)
	}
	return fmt.Errorf("privacy analyze: %w", err)
}

// openInput opens an input file the user named with flag. One that cannot
// be opened (missing, a directory, unreadable) is bad input: exit 2, as a
// missing --datadir is.
func openInput(flag, path string) (*os.File, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, usagef("%s: %w", flag, err)
	}
	if st, err := f.Stat(); err == nil && st.IsDir() {
		f.Close()
		return nil, usagef("%s %s: is a directory, not a file", flag, path)
	}
	return f, nil
}

// readTranscriptFile reads a transcript. A missing or malformed one
// (transcript.Read names its line and sequence number) is a usage error:
// exit 2.
func readTranscriptFile(path string) ([]transcript.Record, error) {
	f, err := openInput("--transcript", path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	recs, err := transcript.Read(f)
	if errors.Is(err, transcript.ErrBad) {
		return nil, usagef("--transcript %s: %w", path, err)
	}
	if err != nil {
		return nil, fmt.Errorf("--transcript %s: %w", path, err)
	}
	return recs, nil
}

// outputFileMode is the permission of the files privacy analyze's --csv
// and --png write (atomicfile.WriteAll: each whole or not at all, and none
// of them when one fails): an analysis of a real transcript, with --truth,
// names the wallet's addresses, so only its owner reads it.
const outputFileMode = 0o600

// experimentFileMode is the permission of the figures and transcripts an
// experiment writes: synthetic data made to be shared, readable by all
// like any other build output.
const experimentFileMode = 0o644

// readElementFile reads an element file whole (a --truth file: the
// wallet's own elements). A missing or malformed one, or one above
// maxTruthFileBytes, is a usage error: exit 2.
func readElementFile(flag, path string) ([]privacy.Candidate, error) {
	f, err := openInput(flag, path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r, err := boundedread.Limit(f, path, maxTruthFileBytes, "maxTruthFileBytes")
	if err != nil {
		return nil, usagef("%s: %w", flag, err)
	}
	cands, err := privacy.ReadCandidates(r)
	if big := (*boundedread.TooLargeError)(nil); errors.As(err, &big) {
		return nil, usagef("%s: %w", flag, big)
	}
	if errors.Is(err, privacy.ErrBadElementFile) {
		return nil, usagef("%s %s: %w", flag, path, err)
	}
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", flag, path, err)
	}
	return cands, nil
}

// dialChain connects to btcd's JSON-RPC server at hostPort (loopback
// only) and reads its tip; upTo caps the chain's height when
// non-negative. An address btcdrpc refuses is a usage error.
func dialChain(hostPort, user, pass string, upTo int32) (*btcdrpc.Chain, error) {
	c, err := btcdrpc.Dial(hostPort, user, pass, upTo)
	if ae := (*btcdrpc.AddressError)(nil); errors.As(err, &ae) {
		return nil, usagef("--btcd-rpc %w", err)
	}
	if err != nil {
		return nil, fmt.Errorf("--btcd-rpc %w", err)
	}
	return c, nil
}

// privacyExportOptions holds the flags of `privacy export-universe`.
type privacyExportOptions struct {
	out        string
	rpc        string
	rpcUser    string
	rpcPass    string
	height     int32
	outpoints  bool
	synthetic  uint64
	seed       uint64
	pubKeys    bool
	partitions int
	tmp        string
	asJSON     bool
	progress   string
}

// newPrivacyExportCmd returns `privacy export-universe`, which writes a
// universe file for `privacy analyze --universe` to stream.
func newPrivacyExportCmd() *cobra.Command {
	o := &privacyExportOptions{}
	cmd := &cobra.Command{
		Use:   "export-universe --out FILE (--btcd-rpc HOST:PORT --rpcuser U --rpcpass P [--height H] [--outpoints] | --synthetic N)",
		Short: "Write a chain's candidates (scripts, revealed public keys, outpoints) to an element file, in bounded memory",
		Long: "Read a btcd node's chain over JSON-RPC on the loopback interface, block by block, and write every\n" +
			"candidate an adversary tests to FILE in the element file format that `privacy analyze --universe`\n" +
			"streams: each script push paid on chain, with the public key a spend revealed (or, with\n" +
			"--outpoints, with its outputs still unspent at --height), and its first-seen height. Memory\n" +
			"stays bounded: observations are spilled to --partitions files in --tmp and grouped one partition\n" +
			"at a time (about 1/partitions of the chain's outputs in memory). --synthetic N writes N\n" +
			"pseudorandom candidates instead (for measuring a scan's memory and rate on a large file).",
		Args: cobra.NoArgs,
		RunE: o.run,
	}
	f := cmd.Flags()
	f.StringVar(&o.out, "out", "", "element file to write")
	f.StringVar(&o.rpc, "btcd-rpc", "", "btcd JSON-RPC server on the loopback HOST:PORT")
	f.StringVar(&o.rpcUser, "rpcuser", "", "btcd RPC user")
	f.StringVar(&o.rpcPass, "rpcpass", "", "btcd RPC password")
	f.Int32Var(&o.height, "height", -1, "last height exported (default: the tip)")
	f.BoolVar(&o.outpoints, "outpoints", false, "export each push with its outpoints unspent at --height instead of revealed public keys")
	f.Uint64Var(&o.synthetic, "synthetic", 0, "write N synthetic candidates instead of a chain's")
	f.Uint64Var(&o.seed, "seed", 1, "seed of the synthetic candidates")
	f.BoolVar(&o.pubKeys, "pubkeys", false, "synthetic candidates carry a public-key form too")
	f.IntVar(&o.partitions, "partitions", btcdrpc.DefaultPartitions, "spill files (memory is about the chain's outputs / partitions)")
	f.StringVar(&o.tmp, "tmp", "", "directory of the spill files (default: the system's)")
	f.BoolVar(&o.asJSON, "json", false, "print the counts as JSON")
	f.StringVar(&o.progress, "progress", progress.Auto, "progress on stderr: auto, bar, lines or none")
	return cmd
}

// universeFileMode is the permission of the file export-universe writes.
const universeFileMode = 0o644

// run implements `privacy export-universe`.
func (o *privacyExportOptions) run(cmd *cobra.Command, _ []string) error {
	fl := cmd.Flags()
	switch {
	case o.out == "":
		return usagef("privacy export-universe: --out is required")
	case (o.rpc == "") == !fl.Changed("synthetic"):
		return usagef("privacy export-universe: give exactly one of --btcd-rpc or --synthetic")
	case fl.Changed("synthetic") && o.synthetic == 0:
		return usagef("privacy export-universe: --synthetic must be at least 1")
	case o.rpc != "" && (o.rpcUser == "" || o.rpcPass == ""):
		return usagef("privacy export-universe: --btcd-rpc needs --rpcuser and --rpcpass")
	case o.rpc == "" && (fl.Changed("height") || fl.Changed("outpoints") || fl.Changed("rpcuser") || fl.Changed("rpcpass")):
		return usagef("privacy export-universe: --height, --outpoints, --rpcuser and --rpcpass go with --btcd-rpc")
	case o.rpc != "" && (fl.Changed("seed") || fl.Changed("pubkeys")):
		return usagef("privacy export-universe: --seed and --pubkeys go with --synthetic")
	case o.partitions < 1 || o.partitions > 4096:
		return usagef("privacy export-universe: --partitions %d: want 1 to 4096", o.partitions)
	case o.height < -1:
		return usagef("privacy export-universe: --height %d: want a height, or -1 for the tip", o.height)
	}
	if err := progress.CheckMode(o.progress); err != nil {
		return usagef("privacy export-universe: --progress %w", err)
	}
	prog := progress.New(cmd.ErrOrStderr(), o.progress)
	defer prog.Done()
	// Written beside the target and renamed over it when complete. A
	// universe is public chain data: readable like any output file.
	tmp, err := atomicfile.Create(o.out, universeFileMode)
	if err != nil {
		return fmt.Errorf("privacy export-universe: %w", err)
	}
	defer tmp.Abort()
	var stats btcdrpc.ExportStats
	if o.synthetic > 0 {
		err = btcdrpc.ExportSynthetic(tmp, o.seed, o.synthetic, o.pubKeys, func(d, n int) { prog.Report("candidates", d, n) })
		stats.Candidates = o.synthetic
		if o.pubKeys {
			stats.MultiForm = o.synthetic
		}
	} else {
		var chain *btcdrpc.Chain
		if chain, err = dialChain(o.rpc, o.rpcUser, o.rpcPass, o.height); err != nil {
			return err
		}
		defer chain.Close()
		chain.SetCaching(false)
		stats, err = btcdrpc.ExportUniverse(cmd.Context(), chain, btcdrpc.ExportConfig{
			UpTo: o.height, Outpoints: o.outpoints, TempDir: o.tmp, Partitions: o.partitions, Progress: prog.Report,
		}, tmp)
	}
	if err == nil {
		err = tmp.Commit()
	}
	if err != nil {
		return fmt.Errorf("privacy export-universe: %w", err)
	}
	prog.Done()
	if o.asJSON {
		return writeJSON(cmd, stats)
	}
	_, err = fmt.Fprintf(cmd.OutOrStdout(), "%s: %d candidates (%d with more than one form) from %d blocks; %d observations, at most %d in memory at once\n",
		o.out, stats.Candidates, stats.MultiForm, stats.Blocks, stats.Observations, stats.MaxPartition)
	return err
}
