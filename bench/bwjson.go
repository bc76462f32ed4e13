package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// errNoSummary is returned when bloomwatch's stdout holds no JSON summary.
var errNoSummary = errors.New("bloomwatch sync printed no JSON summary")

// bwSummary is the part of `bloomwatch sync --json` the bench reads.
type bwSummary struct {
	TipHeight    int32 `json:"tip_height"`
	HeaderHeight int32 `json:"header_height"`
	Txs          []struct {
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
	r := &ClientResult{Client: "bloomwatch", TipHeight: s.TipHeight, HeaderHeight: s.HeaderHeight, FPUnit: "tx",
		FalsePositives: *s.FalsePositives, BytesReceived: *s.BytesReceived}
	for _, t := range s.Txs {
		r.Txs = append(r.Txs, FoundTx{Txid: t.Txid, Height: t.Height})
	}
	return r, nil
}

// bloomwatchPhases reads bloomwatch's headless log (slog text lines,
// time=15:04:05.000) for the time from its first filterload to "synced":
// the P2P part of its wall time, without process start-up and shutdown.
// It returns nil when the lines are not there.
func bloomwatchPhases(stderr []byte) map[string]float64 {
	var first, synced time.Time
	for _, line := range bytes.Split(stderr, []byte("\n")) {
		ts, ok := logTime(line)
		if !ok {
			continue
		}
		switch {
		case first.IsZero() && bytes.Contains(line, []byte("msg=filterload")):
			first = ts
		case bytes.Contains(line, []byte("msg=synced")):
			synced = ts
		}
	}
	if first.IsZero() || synced.IsZero() || synced.Before(first) {
		return nil
	}
	return map[string]float64{"p2p sync": float64(synced.Sub(first)) / float64(time.Millisecond)}
}

func logTime(line []byte) (time.Time, bool) {
	v, ok := bytes.CutPrefix(line, []byte("time="))
	if !ok {
		return time.Time{}, false
	}
	if i := bytes.IndexByte(v, ' '); i > 0 {
		v = v[:i]
	}
	t, err := time.Parse("15:04:05.000", string(v))
	return t, err == nil
}
