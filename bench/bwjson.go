package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/bloomwatch/bloomwatch/session"
)

// errNoSummary is returned when bloomwatch's stdout holds no JSON summary.
var errNoSummary = errors.New("bloomwatch sync printed no JSON summary")

// bwRun is what the bench reads from one `bloomwatch sync --json`: the
// result and, from the summary's timing, the peer-to-peer part of the wall
// time (first filterload to synced), without process start-up and
// shutdown.
type bwRun struct {
	result *ClientResult
	phases map[string]float64
}

// parseBloomwatchJSON reads the last JSON object bloomwatch printed (it may
// print progress lines first): a session.Summary.
func parseBloomwatchJSON(out []byte) (*bwRun, error) {
	out = bytes.TrimSpace(out)
	start := bytes.LastIndex(out, []byte("\n{"))
	switch {
	case start >= 0:
		start++
	case bytes.HasPrefix(out, []byte("{")):
		start = 0
	default:
		return nil, errNoSummary
	}
	raw := out[start:]
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(raw, &keys); err != nil {
		return nil, fmt.Errorf("bloomwatch JSON: %w", err)
	}
	for _, k := range []string{"bytes_received", "false_positives"} {
		if _, ok := keys[k]; !ok {
			return nil, fmt.Errorf("%w: %s absent", errNoSummary, k)
		}
	}
	var s session.Summary
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, fmt.Errorf("bloomwatch JSON: %w", err)
	}
	r := &ClientResult{Client: "bloomwatch", TipHeight: s.TipHeight, HeaderHeight: s.HeaderHeight, FPUnit: "tx",
		FalsePositives: s.FalsePositives, BytesReceived: s.BytesReceived, SpotChecks: s.SpotChecks, Omissions: s.Omissions}
	if f := s.Filter; f.Bytes > 0 {
		r.Filter = &FilterReport{Bytes: f.Bytes, HashFuncs: f.HashFuncs, Capacity: f.Capacity, Capped: f.Capped,
			Elements: f.Elements, TargetFPRate: f.TargetFPRate, LoadFPRate: f.FPRate, EndFPRate: f.PredictedFPRate,
			Loads: f.Loads}
	}
	for _, t := range s.Txs {
		r.Txs = append(r.Txs, FoundTx{Txid: t.Txid, Height: t.Height})
	}
	if c := s.CF; c != nil {
		// Over BIP158 a false positive is a block fetched whole.
		r.FPUnit, r.FalsePositives = "block", c.FalsePositiveBlocks
	}
	run := &bwRun{result: r}
	if t := s.Timing; t.FirstFilterMs > 0 && t.SyncedMs >= t.FirstFilterMs {
		run.phases = map[string]float64{"p2p sync": t.SyncedMs - t.FirstFilterMs}
	}
	return run, nil
}
