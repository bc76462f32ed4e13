package bip37

// Protocol limits a full node enforces on BIP37 messages.
const (
	// MaxFilterSize is the largest filter, in bytes, a node accepts in a
	// filterload message (Core's MAX_BLOOM_FILTER_SIZE).
	MaxFilterSize = 36000

	// MaxHashFuncs is the largest number of hash functions a node accepts
	// in a filterload message (Core's MAX_HASH_FUNCS).
	MaxHashFuncs = 50

	// MaxFilterAddSize is the largest element a node accepts in a
	// filteradd message (Core's MAX_SCRIPT_ELEMENT_SIZE).
	MaxFilterAddSize = 520

	// MaxMerkleTxs is the largest transaction count a partial merkle tree
	// may claim: MAX_BLOCK_WEIGHT / MIN_TRANSACTION_WEIGHT = 16666.
	MaxMerkleTxs = maxBlockWeight / minTransactionWeight
)

const (
	// maxBlockWeight is Core's MAX_BLOCK_WEIGHT.
	maxBlockWeight = 4000000

	// minTransactionWeight is Core's MIN_TRANSACTION_WEIGHT: four times
	// the 60-byte minimum serialized transaction.
	minTransactionWeight = 4 * 60

	// bitsPerByte converts between the filter's byte and bit lengths.
	bitsPerByte = 8

	// outPointSize is the serialized size of an outpoint: 32-byte txid
	// followed by the 4-byte little-endian output index.
	outPointSize = 32 + 4
)
