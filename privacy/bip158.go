package privacy

import (
	"context"
	"fmt"
	"math"
	"sort"

	"github.com/bloomwatch/bloomwatch/privacy/element"
	"github.com/bloomwatch/bloomwatch/privacy/replay"
	"github.com/bloomwatch/bloomwatch/privacy/stats"
	"github.com/bloomwatch/bloomwatch/transcript"
	"github.com/btcsuite/btcd/txscript"
	"github.com/btcsuite/btcd/wire"
)

// BlockRequests is what BIP157/158 peers saw of a client: the compact-
// filter records of its transcript. The filters are the same for every
// client and reveal nothing but where the client starts (FiltersFrom: its
// birthday); the whole blocks it asks are the leak.
type BlockRequests struct {
	// FiltersFrom is the first height whose filter was asked (-1: none);
	// FilterRequests counts the getcfilters records.
	FiltersFrom    int32 `json:"filters_from"`
	FilterRequests int   `json:"filter_requests"`
	// Blocks are the heights of the whole blocks asked for delivery, in
	// the order asked; Checks counts the blocks asked to settle a
	// filter-header conflict (not the wallet's by themselves).
	Blocks []int32 `json:"blocks"`
	Checks int     `json:"checks"`
	// PerPeer counts the blocks each peer was asked, in the order the
	// peers were first asked.
	PerPeer []PeerBlocks `json:"per_peer"`
}

// SummarizeBlockRequests returns the compact-filter part of recs, or nil
// when it holds none.
func SummarizeBlockRequests(recs []transcript.Record) *BlockRequests {
	s := &BlockRequests{FiltersFrom: -1, Blocks: []int32{}, PerPeer: []PeerBlocks{}}
	peerIndex := map[string]int{}
	any := false
	for _, r := range recs {
		switch r.Kind {
		case transcript.KindGetCFilters:
			any = true
			s.FilterRequests++
			if s.FiltersFrom < 0 || r.Height < s.FiltersFrom {
				s.FiltersFrom = r.Height
			}
		case transcript.KindGetBlock:
			any = true
			if r.Reason == transcript.ReasonCheck {
				s.Checks++
				continue
			}
			for i := range r.Count {
				s.Blocks = append(s.Blocks, r.Height+int32(i))
			}
			i, ok := peerIndex[r.Peer]
			if !ok {
				i = len(s.PerPeer)
				peerIndex[r.Peer] = i
				s.PerPeer = append(s.PerPeer, PeerBlocks{Peer: r.Peer})
			}
			s.PerPeer[i].Blocks += int(r.Count)
		}
	}
	if !any {
		return nil
	}
	return s
}

// BlockRequestPoint is the adversary's candidate set after one block
// request: the candidates paid or spent in the scanned range whose every
// appearance there is in a requested block.
type BlockRequestPoint struct {
	Seq        uint64  `json:"seq"`
	Height     int32   `json:"height"`
	Candidates int     `json:"candidates"`
	Members    int     `json:"members"`
	Precision  float64 `json:"precision"`
	Entropy    float64 `json:"entropy_bits"`
}

// BlockRequestReport is the leak of a BIP158 client's block requests,
// computed from its transcript and the chain: every peer's requests
// together (the peers collude; one peer served them all in a sync from
// one download peer).
type BlockRequestReport struct {
	Requests *BlockRequests `json:"requests"`
	// From and To are the scanned range: the first filter asked to the
	// last height analysed.
	From int32 `json:"from"`
	To   int32 `json:"to"`
	// Appearing counts the candidates paid or spent in the range: the
	// universe of the attack.
	Appearing int `json:"appearing"`
	// Candidates counts those whose every appearance in the range is in
	// a requested block: the wallet hides among them. Members counts the
	// wallet's candidates among them (with a truth).
	Candidates int  `json:"candidates"`
	Members    int  `json:"members"`
	HasTruth   bool `json:"has_truth"`
	// Precision is Members / Candidates and Entropy log2 C(Candidates,
	// Members): both certain given the transcript and the chain (no
	// interval: nothing in them is random once the requests are made).
	Precision float64 `json:"precision"`
	Entropy   float64 `json:"entropy_bits"`
	// WalletBlocks and FalsePositiveBlocks split the requested blocks
	// by whether they hold a wallet candidate (with a truth).
	WalletBlocks        int `json:"wallet_blocks"`
	FalsePositiveBlocks int `json:"false_positive_blocks"`
	// FPBlocksCI is the 95 % interval (Garwood) of the mean number of
	// false-positive blocks a sync of this range fetches, from the count
	// observed; ExpectedFPBlocks is that mean as BIP158's false-positive
	// rate predicts it for the wallet's queries (BlockFPRate: 1/M per
	// query and block, M = 784,931), with the truth.
	FPBlocksCI       *stats.Interval `json:"fp_blocks_ci,omitempty"`
	ExpectedFPBlocks float64         `json:"expected_fp_blocks"`
	// Curve is the candidate set after each block request.
	Curve []BlockRequestPoint `json:"curve"`
}

// AnalyzeBlockRequests computes what a BIP158 client's block requests
// tell its peers, over chain up to height upTo (the tip when negative).
// A candidate appears in a block when an output there pays it or an input
// there spends an output that paid it (the two things a basic filter
// holds). The chain is read from the genesis block (spends need the
// outputs they spend), in memory: it suits test, regtest and simnet
// chains.
func AnalyzeBlockRequests(ctx context.Context, recs []transcript.Record, chain element.Chain, truth []element.Candidate, upTo int32) (*BlockRequestReport, error) {
	req := SummarizeBlockRequests(recs)
	if req == nil || req.FiltersFrom < 0 {
		return nil, fmt.Errorf("%w: no compact-filter request in the transcript", replay.ErrNoFilters)
	}
	tip, err := chain.BestHeight()
	if err != nil {
		return nil, fmt.Errorf("%w: best height: %w", element.ErrChain, err)
	}
	if upTo < 0 || upTo > tip {
		upTo = tip
	}
	rep := &BlockRequestReport{Requests: req, From: req.FiltersFrom, To: upTo, HasTruth: len(truth) > 0, Curve: []BlockRequestPoint{}}
	asked := make(map[int32]bool, len(req.Blocks))
	for _, h := range req.Blocks {
		asked[h] = true
	}
	wallet := make(map[string]bool, len(truth))
	queries := 0
	for _, c := range truth {
		wallet[c.Key()] = true
		queries += queriesOf(c.Forms[0])
	}
	// first is each candidate's first appearance in the range; bad the
	// first appearance in a block not asked (math.MaxInt32: none).
	first := map[string]int32{}
	bad := map[string]int32{}
	type output struct {
		keys   []string
		script []byte
	}
	spent := map[wire.OutPoint]output{}
	walletBlock := map[int32]bool{}
	var lambda float64
	err = element.WalkChain(ctx, chain, 0, upTo, func(h int32, b *wire.MsgBlock) error {
		seen := map[string]bool{}
		items := map[string]bool{}
		for i, tx := range b.Transactions {
			if i > 0 {
				for _, in := range tx.TxIn {
					prev, ok := spent[in.PreviousOutPoint]
					if !ok {
						continue
					}
					delete(spent, in.PreviousOutPoint)
					for _, k := range prev.keys {
						seen[k] = true
					}
					if len(prev.script) > 0 {
						items[string(prev.script)] = true
					}
				}
			}
			txid := tx.TxHash()
			for o, out := range tx.TxOut {
				if len(out.PkScript) > 0 && out.PkScript[0] != txscript.OP_RETURN {
					items[string(out.PkScript)] = true
				}
				var keys []string
				for _, c := range element.OutputCandidates(out.PkScript) {
					keys = append(keys, c.Key())
					seen[c.Key()] = true
				}
				if len(keys) > 0 {
					spent[wire.OutPoint{Hash: txid, Index: uint32(o)}] = output{keys, out.PkScript}
				}
			}
		}
		if h < rep.From {
			return nil
		}
		own := false
		for k := range seen {
			own = own || wallet[k]
			if _, ok := first[k]; !ok {
				first[k] = h
				bad[k] = math.MaxInt32
			}
			if !asked[h] && bad[k] == math.MaxInt32 {
				bad[k] = h
			}
		}
		if own {
			walletBlock[h] = true
		} else if queries > 0 {
			lambda += BlockFPRate(queries, uint32(len(items)))
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	rep.Appearing = len(first)
	for h := range asked {
		if h < rep.From || h > upTo {
			continue
		}
		if walletBlock[h] {
			rep.WalletBlocks++
		} else {
			rep.FalsePositiveBlocks++
		}
	}
	if rep.HasTruth {
		iv := stats.PoissonInterval(uint64(rep.FalsePositiveBlocks), stats.ConfidenceLevel)
		rep.FPBlocksCI = &iv
		rep.ExpectedFPBlocks = lambda
	}
	// The curve: after the i-th request (height h), the candidates seen
	// by h whose first unrequested appearance is above h (the requests
	// come in height order: a block below h not asked by then was
	// skipped).
	type span struct {
		first, bad int32
		own        bool
	}
	spans := make([]span, 0, len(first))
	for k, f := range first {
		spans = append(spans, span{f, bad[k], wallet[k]})
	}
	sort.Slice(spans, func(i, j int) bool { return spans[i].first < spans[j].first })
	point := func(h int32) (cands, members int) {
		for _, s := range spans {
			if s.first > h {
				break
			}
			if s.bad > h {
				cands++
				if s.own {
					members++
				}
			}
		}
		return cands, members
	}
	for _, r := range recs {
		if r.Kind != transcript.KindGetBlock || r.Reason == transcript.ReasonCheck || r.Height > upTo {
			continue
		}
		h := r.Height + int32(r.Count) - 1
		c, n := point(h)
		rep.Curve = append(rep.Curve, blockRequestPoint(r.Seq, h, c, n, rep.HasTruth))
	}
	rep.Candidates, rep.Members = point(upTo)
	if rep.HasTruth {
		rep.Precision = stats.Precision(float64(rep.Members), float64(rep.Candidates-rep.Members))
		rep.Entropy = stats.Entropy(float64(rep.Members), float64(rep.Candidates-rep.Members))
	}
	return rep, nil
}

// blockRequestPoint fills one curve point.
func blockRequestPoint(seq uint64, h int32, cands, members int, truth bool) BlockRequestPoint {
	p := BlockRequestPoint{Seq: seq, Height: h, Candidates: cands, Members: members}
	if truth {
		p.Precision = stats.Precision(float64(members), float64(cands-members))
		p.Entropy = stats.Entropy(float64(members), float64(cands-members))
	}
	return p
}

// queriesOf is how many output scripts a BIP158 client (spv's
// elementScripts) queries for one data element: a 20-byte hash as P2PKH,
// P2WPKH and P2SH, a 32-byte program as P2WSH and P2TR, a public key as
// P2PK.
func queriesOf(e []byte) int {
	switch len(e) {
	case 20:
		return 3
	case 32:
		return 2
	case 33, 65:
		return 1
	}
	return 0
}
