package tui

import (
	"time"

	"github.com/bloomwatch/bloomwatch/privacy"
	"github.com/bloomwatch/bloomwatch/spv"
	"github.com/bloomwatch/bloomwatch/wallet"
)

// Limits and timings of the dashboard.
const (
	// MaxMatched is the number of matched transactions kept for the table.
	MaxMatched = 10000
	// MaxLogLines is the number of log lines kept.
	MaxLogLines = 500
	// MaxReadings is the number of privacy readings kept for the curve.
	MaxReadings = 1024
	// MaxBatch is the most items one channel read hands to Update.
	MaxBatch = 4096
	// BatchWindow is how long a channel read keeps draining after its
	// first item.
	BatchWindow = 100 * time.Millisecond
	// PollInterval is the wallet polling period.
	PollInterval = time.Second
	// GridWidth is the terminal width from which panels form a grid.
	GridWidth = 120
)

// WalletView is what the dashboard reads from the wallet; *wallet.Wallet
// satisfies it. Calls are made from tea.Cmd goroutines, one poll at a time.
type WalletView interface {
	// Balance returns the confirmed, unconfirmed and immature balances.
	Balance() (wallet.Balance, error)
	// UTXOs returns the unspent outputs.
	UTXOs() ([]wallet.UTXO, error)
	// Addresses returns every watched address with its used flag.
	Addresses() ([]wallet.AddressInfo, error)
	// Stats returns the wallet's match statistics.
	Stats() (wallet.Stats, error)
}

// Config is what the dashboard reads and calls. Every field may be nil or
// empty: a nil channel is never read, a nil function never called.
type Config struct {
	// Network names the chain shown in the header ("regtest").
	Network string
	// Events are the node's events (spv.Subscription's channel).
	Events <-chan spv.Event
	// Privacy are the live privacy meter's readings (privacy.Meter.Observe
	// results), in order: the caller observes each transcript record and
	// forwards the reading here.
	Privacy <-chan privacy.Reading
	// Wallet is polled for the wallet panel: every PollInterval, and after
	// a batch of events that processed or rolled back a block or matched
	// a wallet transaction.
	Wallet WalletView
	// Reload is called with transcript.ReasonManual when the user presses r
	// (spv.Node.ReloadFilter fits); it runs in a tea.Cmd goroutine, so it
	// may block briefly.
	Reload func(reason string)
	// Quit is called once, from Update, on q or ctrl-c, before the
	// program exits.
	Quit func()
	// Finished, when closed, ends the dashboard: the session it shows
	// ended on its own (the tip reached with --until-synced, a failure).
	Finished <-chan struct{}
	// Log are log lines for the log pane (one line each, no newline).
	Log <-chan string
	// Styles are the colours and borders (nil: DefaultStyles()).
	Styles *Styles
	// Now is the clock (nil: time.Now); tests pass a fixed one.
	Now func() time.Time
}
