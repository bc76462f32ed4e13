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

// ExampleNew wires the dashboard to a node, a wallet and a privacy meter
// feed. The readings channel is filled by the caller: each transcript
// record goes through privacy.Meter.Observe and the reading is sent on.
func ExampleNew() {
	run := func(ctx context.Context, cancel context.CancelFunc, node *spv.Node, w *wallet.Wallet,
		readings <-chan privacy.Reading) error {
		sink := tui.NewLogSink(256)
		slog.SetDefault(slog.New(slog.NewTextHandler(sink, nil))) // never stdout
		sub := node.Subscribe()
		defer sub.Cancel()
		m := tui.New(tui.Config{
			Network: "regtest",
			Events:  sub.Events(),
			Privacy: readings,
			Wallet:  w,
			Reload:  node.ReloadFilter,
			Quit:    cancel,
			Log:     sink.Lines(),
		})
		_, err := tea.NewProgram(m, tea.WithAltScreen(), tea.WithContext(ctx)).Run()
		return err
	}
	_ = run
}
