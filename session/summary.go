package session

import (
	"fmt"
	"strconv"
	"time"

	"github.com/bloomwatch/bloomwatch/privacy"
	"github.com/bloomwatch/bloomwatch/spv"
)

// Summary is the end state of a sync: the JSON of `bloomwatch sync
// --json` (and `demo --json`), which the bench and the reliability tests
// decode as well. Every slice is non-nil, so it prints as [] when empty.
type Summary struct {
	Network        string   `json:"network"`
	TipHeight      int32    `json:"tip_height"`
	TipHash        string   `json:"tip_hash"`
	HeaderHeight   int32    `json:"header_height"`
	BalanceSat     int64    `json:"balance_sat"`
	UnconfirmedSat int64    `json:"unconfirmed_sat"`
	ImmatureSat    int64    `json:"immature_sat"`
	Txs            []Tx     `json:"txs"`
	UTXOs          []UTXO   `json:"utxos"`
	MatchedTxs     int      `json:"matched_txs"`
	RelevantTxs    int      `json:"relevant_txs"`
	FalsePositives int      `json:"false_positives"`
	FalsePosTxids  []string `json:"false_positive_txids"`
	Dropped        int      `json:"dropped_unmatched_txs"`
	Blocks         int      `json:"blocks"`
	Rerequested    int      `json:"rerequested_blocks"`
	// GapRaces counts the reloads made because the download peer's
	// filter lacked an element the wallet needed (its lookahead reserve
	// ran out): each fetched blocks again from an aligned boundary.
	GapRaces int `json:"gap_races"`
	Reorgs   int `json:"reorgs"`
	// SpotChecks counts blocks checked against a second peer,
	// FullBlockChecks blocks asked whole from the peer that filtered
	// them, Unchecked blocks no due check could cover (no second peer),
	// ChecksInFlight checks unanswered or waiting at the end; Omissions
	// the checks that caught a peer hiding a matched transaction.
	//
	// State is the node's sync state in words: "synced", "at the tip, N
	// blocks awaiting a check" or "syncing"; Synced, AtTip and
	// AwaitingCheck are spv.Status's; ChecksAbandoned counts checks
	// begun that could not finish (their blocks are among Unchecked).
	State           string `json:"state"`
	Synced          bool   `json:"synced"`
	AtTip           bool   `json:"at_tip"`
	AwaitingCheck   int    `json:"awaiting_check_blocks"`
	ChecksAbandoned int    `json:"checks_abandoned"`
	SpotChecks      int    `json:"spot_checks"`
	FullBlockChecks int    `json:"full_block_checks"`
	Unchecked       int    `json:"unchecked_blocks"`
	ChecksInFlight  int    `json:"checks_in_flight"`
	Omissions       int    `json:"omissions"`
	// Decoys counts the decoys the filters hold (Config.Decoys),
	// DecoyMatches the false positives that matched one: their cost;
	// DecoysRetired the busy decoys taken out of the filters this run.
	Decoys         int              `json:"decoys"`
	DecoyMatches   int              `json:"decoy_matches"`
	DecoysRetired  int              `json:"decoys_retired"`
	ObservedFPRate float64          `json:"observed_fp_rate"`
	BytesReceived  uint64           `json:"bytes_received"`
	Filter         Filter           `json:"filter"`
	Peers          []Peer           `json:"peers"`
	Bans           []Ban            `json:"bans"`
	Privacy        *privacy.Reading `json:"privacy,omitempty"`
	Addresses      AddressCount     `json:"addresses"`
	Timing         Timing           `json:"timing"`
	// Protocol is how blocks were found: "bip37" or "bip158"; CF what
	// a sync over BIP158 fetched (absent over BIP37).
	Protocol string     `json:"protocol"`
	CF       *CFSummary `json:"compact_filters,omitempty"`
}

// Tx is one wallet transaction.
type Tx struct {
	Txid          string `json:"txid"`
	Height        int32  `json:"height"`
	DeltaSat      int64  `json:"delta_sat"`
	Confirmations int32  `json:"confirmations"`
}

// UTXO is one unspent wallet output.
type UTXO struct {
	Outpoint string `json:"outpoint"`
	ValueSat int64  `json:"value_sat"`
	Height   int32  `json:"height"`
	Address  string `json:"address"`
}

// Filter describes the last filter loaded.
type Filter struct {
	Bytes           int     `json:"bytes"`
	HashFuncs       uint32  `json:"hash_funcs"`
	Elements        int     `json:"elements"`
	Capacity        uint32  `json:"capacity"`
	FPRate          float64 `json:"fp_rate"`
	PredictedFPRate float64 `json:"predicted_fp_rate"`
	TargetFPRate    float64 `json:"target_fp_rate"`
	Capped          bool    `json:"capped"`
	Tweak           uint32  `json:"tweak"`
	Flags           string  `json:"flags"`
	Loads           int     `json:"loads"`
	// Seq is the last filterload's transcript record number, the number
	// the dashboard ("Filter #"), the log and privacy analyze give it.
	Seq uint64 `json:"seq"`
}

// Peer is one connected peer at the end.
type Peer struct {
	Addr      string `json:"addr"`
	UserAgent string `json:"user_agent"`
	Height    int32  `json:"height"`
	BanScore  uint32 `json:"ban_score"`
	// Transport is the connection's P2P transport: "v2" (BIP324,
	// encrypted) or "v1" (plaintext).
	Transport string `json:"transport"`
	// WireSent and WireReceived are the bytes on the network each way,
	// what an on-path observer counts.
	WireSent     uint64 `json:"wire_sent"`
	WireReceived uint64 `json:"wire_received"`
}

// Ban is one ban in force.
type Ban struct {
	Addr   string `json:"addr"`
	Reason string `json:"reason"`
}

// AddressCount counts the wallet's addresses (wallet.AddressCounts, read
// from the watch set without deriving a key): Derived the HD addresses,
// Used those, derived or imported, that received a payment.
type AddressCount struct {
	Derived int `json:"derived"`
	Used    int `json:"used"`
}

// Timing is when the session's milestones came, in milliseconds after
// Start (0 when the milestone never came): the first filterload (the
// peer-to-peer part begins) and the first time the wallet reached the
// peers' tip.
type Timing struct {
	FirstFilterMs float64 `json:"first_filter_ms"`
	SyncedMs      float64 `json:"synced_ms"`
}

// Summary collects the end state of the session.
func (s *Session) Summary() (*Summary, error) {
	st := s.node.Status()
	out := &Summary{
		Network:         s.network.Name,
		HeaderHeight:    st.HeaderHeight,
		MatchedTxs:      st.Matched,
		RelevantTxs:     st.Relevant,
		FalsePositives:  st.FalsePositives,
		Dropped:         st.Dropped,
		Blocks:          st.Blocks,
		Rerequested:     st.Rerequested,
		GapRaces:        st.GapRaces,
		Reorgs:          st.Reorgs,
		State:           SyncState(st),
		Synced:          st.Synced,
		AtTip:           st.AtTip,
		AwaitingCheck:   st.AwaitingCheck,
		ChecksAbandoned: st.ChecksAbandoned,
		SpotChecks:      st.SpotChecks,
		FullBlockChecks: st.FullBlockChecks,
		Unchecked:       st.Unchecked,
		ChecksInFlight:  st.ChecksInFlight,
		Omissions:       st.Omissions,
		ObservedFPRate:  st.ObservedFPRate,
		Decoys:          st.Decoys,
		DecoyMatches:    st.DecoyMatches,
		DecoysRetired:   st.DecoysRetired,
		BytesReceived:   st.BytesReceived,
		Filter: Filter{
			Bytes: st.Filter.Bytes, HashFuncs: st.Filter.HashFuncs, Elements: st.Filter.Elements,
			Capacity: st.Filter.Capacity, FPRate: st.Filter.FPRate, PredictedFPRate: st.Filter.PredictedFPRate,
			TargetFPRate: st.Filter.TargetFPRate, Capped: st.Filter.Capped,
			Tweak: st.Filter.Tweak, Flags: st.Filter.Flags, Loads: st.Filter.Loads, Seq: st.Filter.Seq,
		},
		Txs: []Tx{}, UTXOs: []UTXO{}, Peers: []Peer{}, Bans: []Ban{}, FalsePosTxids: []string{},
		Protocol: string(st.Protocol), CF: s.cfSummary(st),
	}
	// The block the balance and the transactions below reflect (with a
	// rescan pending that did not start, the kept history's).
	sp := s.w.HistoryPoint()
	out.TipHeight = sp.Height
	if sp.Height >= 0 {
		out.TipHash = sp.Hash.String()
	}
	h, err := s.w.Holdings()
	if err != nil {
		return nil, fmt.Errorf("summary: %w", err)
	}
	bal := h.Balance
	out.BalanceSat, out.UnconfirmedSat, out.ImmatureSat = int64(bal.Confirmed), int64(bal.Unconfirmed), int64(bal.Immature)
	out.Txs = make([]Tx, 0, len(h.Txs))
	for _, t := range h.Txs {
		out.Txs = append(out.Txs, Tx{Txid: t.Txid.String(), Height: t.Height, DeltaSat: t.Delta, Confirmations: t.Confirmations})
	}
	out.UTXOs = make([]UTXO, 0, len(h.UTXOs))
	for _, u := range h.UTXOs {
		out.UTXOs = append(out.UTXOs, UTXO{Outpoint: u.Txid.String() + ":" + strconv.FormatUint(uint64(u.Index), 10),
			ValueSat: int64(u.Amount), Height: u.Height, Address: u.Address})
	}
	fps, err := s.w.FalsePositives(0)
	if err != nil {
		return nil, fmt.Errorf("summary: %w", err)
	}
	for _, fp := range fps {
		out.FalsePosTxids = append(out.FalsePosTxids, fp.Txid.String())
	}
	counts, err := s.w.AddressCounts()
	if err != nil {
		return nil, fmt.Errorf("summary: %w", err)
	}
	out.Addresses = AddressCount{Derived: counts.Derived, Used: counts.Used()}
	for _, p := range st.Peers {
		out.Peers = append(out.Peers, Peer{Addr: p.Addr, UserAgent: p.UserAgent, Height: p.LastBlock, BanScore: p.BanScore,
			Transport: p.Transport, WireSent: p.WireSent, WireReceived: p.WireReceived})
	}
	for _, b := range s.node.Bans() {
		out.Bans = append(out.Bans, Ban{Addr: b.Addr, Reason: b.Reason})
	}
	out.Privacy = s.Reading()
	s.mu.Lock()
	out.Timing = Timing{FirstFilterMs: msSince(s.started, s.firstFilter), SyncedMs: msSince(s.started, s.syncedAt)}
	s.mu.Unlock()
	return out, nil
}

// msSince returns t - start in milliseconds, or 0 when t is unset.
func msSince(start, t time.Time) float64 {
	if t.IsZero() || start.IsZero() {
		return 0
	}
	return float64(t.Sub(start)) / float64(time.Millisecond)
}

// SyncState says a node's sync state in words: "synced" (at the tip, every
// block checked wherever a second peer could answer), "at the tip, N
// blocks awaiting a check" (the node is not synced until they are
// checked), or "syncing".
func SyncState(st spv.Status) string {
	switch {
	case st.Synced:
		return "synced"
	case st.AtTip && st.AwaitingCheck > 0:
		return fmt.Sprintf("at the tip, %d %s awaiting a check", st.AwaitingCheck, plural(st.AwaitingCheck, "block", "blocks"))
	}
	return "syncing"
}

// plural returns one for n == 1, else many.
func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
