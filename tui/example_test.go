package tui_test

import (
	"context"
	"log/slog"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/bloomwatch/bloomwatch/privacy"
	"github.com/bloomwatch/bloomwatch/spv"
	"github.com/bloomwatch/bloomwatch/tui"
	"github.com/bloomwatch/bloomwatch/wallet"
)

// ExampleNew wires the dashboard to a node, a privacy meter feed and a
// wallet change feed. Both feeds are filled by the caller, as a session
// does: each transcript record goes through privacy.Meter.Observe and the
// reading is sent on; the wallet's Changes are read once per batch of the
// node's events that may have changed it and sent on.
func ExampleNew() {
	run := func(ctx context.Context, cancel context.CancelFunc, node *spv.Node,
		readings <-chan privacy.Reading, changes <-chan wallet.ChangeResult) error {
		sink := tui.NewLogSink(256)
		slog.SetDefault(slog.New(slog.NewTextHandler(sink, nil))) // never stdout
		sub := node.Subscribe()
		defer sub.Cancel()
		m := tui.New(tui.Config{
			Network: "regtest",
			Events:  sub.Events(),
			Privacy: readings,
			Wallet:  changes,
			Reload:  node.ReloadFilter,
			Quit:    cancel,
			Log:     sink.Lines(),
		})
		_, err := tea.NewProgram(m, tea.WithAltScreen(), tea.WithContext(ctx)).Run()
		return err
	}
	_ = run
}
