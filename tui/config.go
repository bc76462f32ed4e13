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
	// ClockInterval is how often the fields that depend on the clock
	// alone (the time since the last block) are redrawn.
	ClockInterval = time.Second
	// GridWidth is the terminal width from which panels form a grid.
	GridWidth = 120
)

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
	// Wallet are the wallet's changes (wallet.Wallet.Changes results, in
	// order: session.Session.WalletChanges), which the wallet panel and
	// the detail view apply to what they hold; the first carries every
	// address and unspent output. The dashboard never reads the wallet.
	Wallet <-chan wallet.ChangeResult
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
