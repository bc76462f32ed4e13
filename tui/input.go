package tui

import (
	"strings"
	"time"

	"github.com/btcsuite/btcd/wire"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/bloomwatch/bloomwatch/privacy"
	"github.com/bloomwatch/bloomwatch/spv"
	"github.com/bloomwatch/bloomwatch/transcript"
	"github.com/bloomwatch/bloomwatch/wallet"
)

// eventsMsg is one batch of node events; closed reports that the channel
// was closed (the reader is not re-armed).
type eventsMsg struct {
	events []spv.Event
	closed bool
}

// readingsMsg is one batch of privacy readings.
type readingsMsg struct {
	readings []privacy.Reading
	closed   bool
}

// logMsg is one batch of log lines.
type logMsg struct {
	lines  []string
	closed bool
}

// tickMsg drives the clock-dependent fields.
type tickMsg time.Time

// finishedMsg reports that Config.Finished was closed.
type finishedMsg struct{}

// reloadDoneMsg reports that Config.Reload returned.
type reloadDoneMsg struct{}

// walletMsg is one batch of the wallet's changes.
type walletMsg struct {
	results []wallet.ChangeResult
	closed  bool
}

// walletSnapshot is what the wallet panel shows, and what the detail
// view needs to say why a transaction is the wallet's: the watched
// addresses (with their derivation path), the filter elements they put
// in the filter, and the unspent outputs (values of inputs that spend
// them), built from the wallet's changes alone.
type walletSnapshot struct {
	balance   wallet.Balance
	utxos     int
	used      int
	addresses int
	stats     wallet.Stats
	// watched maps an address to its derivation path ("" when imported
	// without one); elements maps a filter element (hex) to its address.
	watched  map[string]string
	elements map[string]string
	unspent  map[wire.OutPoint]wallet.UTXO
}

// apply folds one change of the wallet into the snapshot: its figures
// replace the old ones, its addresses and outputs are added or updated,
// its spent outpoints removed.
func (s *walletSnapshot) apply(c wallet.Change) {
	if s.watched == nil {
		s.watched = make(map[string]string, len(c.Addresses))
		s.elements = make(map[string]string, len(c.Addresses))
		s.unspent = make(map[wire.OutPoint]wallet.UTXO, len(c.UTXOs))
	}
	s.balance, s.stats = c.Balance, c.Stats
	s.addresses, s.used = c.Counts.Derived+c.Counts.Imported, c.Counts.Used()
	for _, a := range c.Addresses {
		if a.Address != "" {
			s.watched[a.Address] = a.Path
		}
		if a.Element != "" {
			s.elements[strings.ToLower(a.Element)] = a.Address
		}
	}
	for _, u := range c.UTXOs {
		s.unspent[wire.OutPoint{Hash: u.Txid, Index: u.Index}] = u
	}
	for _, op := range c.Spent {
		delete(s.unspent, op)
	}
	s.utxos = len(s.unspent)
}

// readBatch returns a Cmd that blocks for one item of ch, then drains it
// for up to BatchWindow or MaxBatch items, and wraps the batch. It returns
// nil when done is closed first.
func readBatch[T any](ch <-chan T, done <-chan struct{}, wrap func([]T, bool) tea.Msg) tea.Cmd {
	if ch == nil {
		return nil
	}
	return func() tea.Msg {
		var first T
		select {
		case v, ok := <-ch:
			if !ok {
				return wrap(nil, true)
			}
			first = v
		case <-done:
			return nil
		}
		batch := []T{first}
		timer := time.NewTimer(BatchWindow)
		defer timer.Stop()
		for len(batch) < MaxBatch {
			select {
			case v, ok := <-ch:
				if !ok {
					return wrap(batch, true)
				}
				batch = append(batch, v)
			case <-timer.C:
				return wrap(batch, false)
			case <-done:
				return nil
			}
		}
		return wrap(batch, false)
	}
}

// waitEvents re-arms the node event reader.
func (m *Model) waitEvents() tea.Cmd {
	return readBatch(m.cfg.Events, m.sh.done, func(b []spv.Event, closed bool) tea.Msg {
		return eventsMsg{events: b, closed: closed}
	})
}

// waitReadings re-arms the privacy reading reader.
func (m *Model) waitReadings() tea.Cmd {
	return readBatch(m.cfg.Privacy, m.sh.done, func(b []privacy.Reading, closed bool) tea.Msg {
		return readingsMsg{readings: b, closed: closed}
	})
}

// waitLog re-arms the log reader.
func (m *Model) waitLog() tea.Cmd {
	return readBatch(m.cfg.Log, m.sh.done, func(b []string, closed bool) tea.Msg {
		return logMsg{lines: b, closed: closed}
	})
}

// waitWallet re-arms the wallet change reader.
func (m *Model) waitWallet() tea.Cmd {
	return readBatch(m.cfg.Wallet, m.sh.done, func(b []wallet.ChangeResult, closed bool) tea.Msg {
		return walletMsg{results: b, closed: closed}
	})
}

// tick schedules the next tickMsg.
func tick() tea.Cmd {
	return tea.Tick(ClockInterval, func(t time.Time) tea.Msg { return tickMsg(t) })
}

// reload calls Config.Reload off the Update path.
func reload(f func(string)) tea.Cmd {
	return func() tea.Msg {
		f(transcript.ReasonManual)
		return reloadDoneMsg{}
	}
}

// waitFinished returns a Cmd that reports the close of Config.Finished
// (nil when there is no such channel), or nothing once the dashboard quit.
func (m *Model) waitFinished() tea.Cmd {
	fin, done := m.cfg.Finished, m.sh.done
	if fin == nil {
		return nil
	}
	return func() tea.Msg {
		select {
		case <-fin:
			return finishedMsg{}
		case <-done:
			return nil
		}
	}
}
