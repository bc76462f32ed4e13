package privacy

import (
	"math"

	"github.com/bloomwatch/bloomwatch/privacy/stats"
	"github.com/btcsuite/btcd/btcutil/gcs/builder"
)

// BlockFPRate is the probability that a basic filter of items items
// matches one of queries scripts that are not in its block: BIP158's
// Golomb-coded set hashes every item and every query into [0, items*M),
// so one query collides with one of the items with probability 1/M
// (M = 784,931) whatever the number of items, and a block's filter
// matches by chance with probability 1 - (1 - 1/M)^queries. An empty
// filter matches nothing.
func BlockFPRate(queries int, items uint32) float64 {
	if queries <= 0 || items == 0 {
		return 0
	}
	return -math.Expm1(float64(queries) * math.Log1p(-1/float64(builder.DefaultM)))
}

// CFReading is what the BIP157/158 peers learned of a client so far,
// live, computed by the client itself from what it did: the filters it
// scanned, the whole blocks it asked, and which of those held a payment
// of its wallet. The candidates consistent with the blocks asked (the
// anonymity set) need the chain: AnalyzeBlockRequests (privacy analyze).
type CFReading struct {
	// FiltersFrom is the first height whose filter was asked (-1:
	// none): the birthday the peers see.
	FiltersFrom int32 `json:"filters_from"`
	// Scanned counts the blocks whose filter the client matched and
	// applied this run; Fetched the whole blocks it asked (the blocks of
	// BlockRequests: what the peers learn), PerPeer how many each peer
	// was asked.
	Scanned int          `json:"scanned_blocks"`
	Fetched int          `json:"fetched_blocks"`
	PerPeer []PeerBlocks `json:"per_peer"`
	// WalletBlocks and FalsePositiveBlocks split the fetched blocks
	// applied so far: those that held a transaction of the wallet's and
	// those that held none (their filter matched by chance).
	WalletBlocks        int `json:"wallet_blocks"`
	FalsePositiveBlocks int `json:"false_positive_blocks"`
	// Queries is the number of scripts the last filter was matched
	// against. ExpectedFPBlocks is the false-positive blocks BIP158's rate
	// predicts for the scanned blocks that held nothing of the wallet's:
	// the sum of BlockFPRate(queries, items) over them, each with its
	// own query count and filter size. FPBlocksCI is the 95 % interval
	// (Garwood) of that mean from the count observed.
	Queries          int            `json:"queries"`
	ExpectedFPBlocks float64        `json:"expected_fp_blocks"`
	FPBlocksCI       stats.Interval `json:"fp_blocks_ci"`
	// BIP37 is what the same wallet would show its peers over BIP37:
	// the meter's reading of the filter it would load (built, never
	// sent); nil when it could not be built.
	BIP37 *FilterAlternative `json:"bip37_alternative,omitempty"`
}

// FilterAlternative is the privacy meter's reading of one BIP37 filter
// alone: the filter a client would load for its wallet, beside the
// protocol it uses instead.
type FilterAlternative struct {
	// Bytes, HashFuncs and Elements are the filter's size, its hash
	// function count and the elements it holds; FPRate its exact rate
	// (X/n)^k per element and TxFPRate per transaction (Reading's
	// ExpectedTxFPRate: MeterConfig.ElementsPerTx elements tested each).
	Bytes     int     `json:"bytes"`
	HashFuncs uint32  `json:"hash_funcs"`
	Elements  int     `json:"elements"`
	FPRate    float64 `json:"fp_rate"`
	TxFPRate  float64 `json:"tx_fp_rate"`
	// Candidates is the universe |A| the figures assume (0: not known:
	// then ExpectedFP, Precision and Entropy say nothing), ExpectedFP the
	// candidates expected to match the filter that are not the
	// wallet's, Precision and Entropy the expected precision and entropy
	// of the wallet among them (Reading's SinglePrecision,
	// SingleEntropy).
	Candidates uint64  `json:"candidates"`
	ExpectedFP float64 `json:"expected_fp"`
	Precision  float64 `json:"precision"`
	Entropy    float64 `json:"entropy_bits"`
}

// PeerBlocks is the number of whole blocks one peer was asked.
type PeerBlocks struct {
	Peer   string `json:"peer"`
	Blocks int    `json:"blocks"`
}
