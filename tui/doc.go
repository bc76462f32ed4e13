// Package tui is bloomwatch's terminal dashboard: a bubbletea model that
// shows what the light node is doing (peers, headers, filtered blocks), the
// bloom filter it loaded, the transactions peers sent because they matched
// (the wallet's and the false positives), the watch-only wallet, the live
// privacy meter with its collapse curve, and a log pane; and on demand why
// one transaction matched, the filter's bits, and what every figure means.
//
// # Panels
//
// Every part of the screen follows one contract (panel.go): it renders
// from the model's state at the size the root gives it and keeps nothing
// but caches; the root owns the state, the focus, the keys and the one
// WindowSizeMsg. One file per panel: header.go, filterpanel.go,
// walletpanel.go, privacypanel.go, matchedpanel.go, peerspanel.go,
// logpanel.go, footer.go (the help line and the help view), and the
// overlays that replace the panels: detail.go (enter on a matched row:
// the transaction, its verdict and why, what matched the filter with its
// bit positions and the chance of such a match), bitspanel.go (b: the
// filter as sent, a braille dot per bit, and the bits a reload set), and
// the log line view (enter on the focused log: its bottom line whole).
//
// # Keys
//
// enter explains the row under the cursor, esc goes back (and clears a
// search), / searches the matched rows as they are typed (a txid or
// address fragment, a height, or the keywords wallet, fp, seen, mempool,
// reorged), s sorts them (arrival, height, amount) and S reverses, b draws
// the filter, f hides the false positives, r reloads the filter, tab moves
// the focus, ? shows every key and what each figure means, q quits.
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
// The log pane shows each event once: the dashboard writes one compact
// line per node event, and drops the logger's lines that repeat one (peer
// connected, peer gone, filterload, synced, reorg); the logger's other
// lines (warnings, the demo's chain events) are shown without their keys.
//
// The dashboard never reads the wallet: it is handed the wallet's changes
// (Config.Wallet, wallet.Change: the figures, and the watched addresses
// and unspent outputs that came, changed or went, which the detail view
// explains verdicts with), which a session reads once per batch of node
// events that may have changed the wallet, and applies each to what it
// holds. A failed read is shown in the wallet panel over the last figures.
//
// # Cost
//
// View renders only the visible rows and slices what Update prepared: the
// searched or sorted table, the open detail, the filter picture (read
// from the filter its filterload carries, never decoded again) and the chart are rebuilt in Update when
// what they depend on changes. The matched transactions are a rolling
// buffer of MaxMatched rows (the counts stay exact; a row holds its
// transaction and match explanation, nothing derived that grows), the log
// keeps MaxLogLines lines and the collapse curve MaxReadings readings.
//
// # Layout
//
// Below GridWidth columns the panels are stacked, the focused scrollable
// panel (tab: matched, peers, log) taking the spare rows and each panel
// its shortest form (80x24 keeps the header, one line each of filter and
// wallet, two of privacy figures, and the table); from GridWidth columns
// up they form a grid. Every frame has exactly the terminal's size, and
// every size from 80x24 up keeps: the footer's "? help" and "q quit"
// (other keys are dropped first), the download peer as the Peers panel's
// first row with "+N more" for the rows it has no room for, the privacy
// figures (expected false positives, precision and entropy, latest filter
// and all combined) before any chart, a caption above every chart, and
// log lines whole (wrapped, or enter on the focused log).
package tui
