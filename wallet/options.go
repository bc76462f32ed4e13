package wallet

import "time"

// Option adjusts how a wallet is opened or created.
type Option func(*options)

// options are the run-time settings of an open wallet; none is stored.
type options struct {
	batchBlocks   int
	batchInterval time.Duration
	now           func() time.Time
	network       string
	mempool       MempoolLimits
	reserve       uint32
}

func defaultOptions() options {
	return options{
		batchBlocks:   DefaultBatchBlocks,
		batchInterval: DefaultBatchInterval,
		now:           time.Now,
		mempool:       DefaultMempoolLimits(),
		reserve:       defaultReserve,
	}
}

// defaultReserve is the reserve of a wallet opened without WithReserve:
// DefaultReserve (the package's tests that check the gap rule alone set
// it to 0).
var defaultReserve uint32 = DefaultReserve

// WithReserve sets the lookahead reserve: how many unused addresses every
// HD branch keeps derived beyond its gap limit (DefaultReserve; 0: none,
// every payment that moves the gap then makes the node re-fetch blocks).
// It is a run-time setting: a larger one tops the reserve up at the next
// payment, a smaller one never removes addresses.
func WithReserve(n uint32) Option {
	return func(o *options) { o.reserve = min(n, MaxReserve) }
}

// WithBatch sets how many blocks ApplyBlock may group in one database
// transaction, and how long such a batch may stay open. blocks <= 1
// commits every block on its own; interval <= 0 removes the time bound.
func WithBatch(blocks int, interval time.Duration) Option {
	return func(o *options) {
		if blocks < 1 {
			blocks = 1
		}
		o.batchBlocks = blocks
		o.batchInterval = interval
	}
}

// WithClock replaces time.Now, for the receive time of unconfirmed
// transactions, their expiry (MempoolExpiry) and the batch interval.
func WithClock(now func() time.Time) Option {
	return func(o *options) {
		if now != nil {
			o.now = now
		}
	}
}

// WithNetwork makes Open fail with ErrWrongNetwork unless the wallet
// belongs to the named network.
func WithNetwork(name string) Option {
	return func(o *options) { o.network = name }
}
