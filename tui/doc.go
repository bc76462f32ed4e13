// Package tui is bloomwatch's terminal dashboard: a bubbletea model that
// shows what the light node is doing (peers, headers, filtered blocks), the
// bloom filter it loaded, the transactions peers sent because they matched
// (the wallet's and the false positives), the watch-only wallet, the live
// privacy meter with its collapse curve, and a log pane.
//
// # Inputs
//
// Everything external enters through channels named in Config: node events
// (spv.Event), privacy meter readings (privacy.Reading) and log lines. Each
// channel is read by a re-arming tea.Cmd that blocks for one item, then
// keeps draining for up to BatchWindow (or MaxBatch items) and hands the
// whole batch to Update as one message, so a busy stream costs one Update
// and one frame per batch, never one per event. The model never calls
// Program.Send. A closed channel stops its reader; quitting closes a done
// channel that releases every reader still waiting.
//
// The wallet is polled through WalletView from a tea.Cmd (never inside
// Update): every PollInterval and after each batch that may have changed
// it, at most one poll at a time.
//
// # Cost
//
// View renders only the visible rows. The matched transactions are a
// rolling buffer of MaxMatched rows (the counts stay exact), the log keeps
// MaxLogLines lines and the collapse curve MaxReadings readings.
//
// # Layout
//
// Below GridWidth columns the panels are stacked, the focused scrollable
// panel (tab: matched, peers, log) taking the spare rows; from GridWidth
// columns up they form a grid. Every frame has exactly the terminal's size.
package tui
