package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
)

// errNoSummary is returned when bloomwatch's stdout holds no JSON summary.
var errNoSummary = errors.New("bloomwatch sync printed no JSON summary")

// bwSummary is the part of `bloomwatch sync --json` the bench reads.
type bwSummary struct {
	TipHeight int32 `json:"tip_height"`
	Txs       []struct {
		Txid   string `json:"txid"`
		Height int32  `json:"height"`
	} `json:"txs"`
	FalsePositives *int    `json:"false_positives"`
	BytesReceived  *uint64 `json:"bytes_received"`
}

// parseBloomwatchJSON reads the last JSON object bloomwatch printed (it may
// print progress lines first).
func parseBloomwatchJSON(out []byte) (*ClientResult, error) {
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
	var s bwSummary
	if err := json.NewDecoder(bytes.NewReader(out[start:])).Decode(&s); err != nil {
		return nil, fmt.Errorf("bloomwatch JSON: %w", err)
	}
	if s.BytesReceived == nil || s.FalsePositives == nil {
		return nil, fmt.Errorf("%w: bytes_received or false_positives absent", errNoSummary)
	}
	r := &ClientResult{Client: "bloomwatch", TipHeight: s.TipHeight, FPUnit: "tx",
		FalsePositives: *s.FalsePositives, BytesReceived: *s.BytesReceived}
	for _, t := range s.Txs {
		r.Txs = append(r.Txs, FoundTx{Txid: t.Txid, Height: t.Height})
	}
	return r, nil
}
