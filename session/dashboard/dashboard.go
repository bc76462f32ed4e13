// Package dashboard runs a session under the terminal dashboard of package
// tui: what `bloomwatch sync` and `bloomwatch demo` show on a terminal, for
// any Go program that runs a session.
//
//	ui := dashboard.Attach(&cfg, os.Stdout, os.Stdin)
//	s, err := session.Run(ctx, cfg, nil, ui)
package dashboard

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/bloomwatch/bloomwatch/session"
	"github.com/bloomwatch/bloomwatch/tui"
)

// logLines is how many log lines wait for the dashboard's log pane.
const logLines = 512

// Attach sets cfg up for the dashboard (Config.Dashboard, and the log teed
// into the dashboard's log pane, beside any LogTee already set) and
// returns the session.UI that draws it on out, a terminal, in the
// alternate screen, reading keys from in, until the user quits (which
// cancels the session) or the session ends. The UI returns the dashboard's
// own failure; an interrupted dashboard is no failure.
func Attach(cfg *session.Config, out, in *os.File) session.UI {
	sink := tui.NewLogSink(logLines)
	cfg.Dashboard = true
	if cfg.LogTee != nil {
		cfg.LogTee = io.MultiWriter(cfg.LogTee, sink)
	} else {
		cfg.LogTee = sink
	}
	return func(ctx context.Context, s *session.Session, cancel context.CancelFunc) error {
		model := tui.New(tui.Config{
			Network: s.Network().Name, Events: s.Events(), Privacy: s.Readings(), Wallet: s.WalletChanges(),
			Reload: s.Node().ReloadFilter, Quit: cancel, Finished: s.Done(), Log: sink.Lines(),
		})
		p := tea.NewProgram(model, tea.WithAltScreen(), tea.WithContext(ctx), tea.WithOutput(out), tea.WithInput(in))
		if _, err := p.Run(); err != nil && !errors.Is(err, tea.ErrProgramKilled) && !errors.Is(err, context.Canceled) {
			return fmt.Errorf("dashboard: %w", err)
		}
		return nil
	}
}
