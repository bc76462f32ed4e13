package main

import (
	"context"
	"errors"
	"fmt"
	"os"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/spf13/cobra"

	"github.com/bloomwatch/bloomwatch/internal/progress"
	"github.com/bloomwatch/bloomwatch/nodeapi"
	"github.com/bloomwatch/bloomwatch/tui"
)

// dashboardOptions are the flags of `bloomwatch dashboard`.
type dashboardOptions struct {
	datadir string
}

// newDashboardCmd returns `bloomwatch dashboard`, which attaches the
// dashboard to a running node.
func newDashboardCmd() *cobra.Command {
	o := &dashboardOptions{}
	cmd := &cobra.Command{
		Use:   "dashboard [--datadir D]",
		Short: "Attach the dashboard to the node running on the data dir (sync, demo); q detaches and leaves it running",
		Long: "Attach the terminal dashboard to the node that runs on the data dir (a headless\n" +
			"bloomwatch sync or demo, or one with its own dashboard), through its node API: the\n" +
			"panels show what the node does from now on, starting from its latest filter, peers,\n" +
			"headers and block. q (or ctrl-c) detaches: the node keeps running; r reloads its\n" +
			"filter. When the node stops, the dashboard ends.",
		Args: cobra.NoArgs,
		RunE: o.run,
	}
	registerDatadir(cmd.Flags(), &o.datadir)
	return cmd
}

// run implements `bloomwatch dashboard`.
func (o *dashboardOptions) run(cmd *cobra.Command, _ []string) error {
	const prefix = "dashboard"
	if o.datadir == "" {
		return usagef("%s: --datadir is required", prefix)
	}
	out, ok := cmd.OutOrStdout().(*os.File)
	if !ok || !progress.IsTerminal(out) {
		return usagef("%s: needs a terminal (the node's state without one: wallet balance, wallet txs, ... on the same data dir)", prefix)
	}
	c, err := nodeapi.Dial(cmd.Context(), o.datadir)
	if errors.Is(err, nodeapi.ErrNoNode) {
		return usagef("%s: no node runs on %s (start bloomwatch sync or demo there; the dashboard attaches to it): %w", prefix, o.datadir, err)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", prefix, err)
	}
	defer c.Close()
	ctx, detach := context.WithCancel(cmd.Context())
	defer detach()
	feed, err := c.Stream(ctx)
	if err != nil {
		return fmt.Errorf("%s: %w", prefix, err)
	}
	defer feed.Close()
	model := tui.New(tui.Config{
		Network: c.Status().Network, Events: feed.Events, Privacy: feed.Privacy, Wallet: feed.Wallet, Log: feed.Log,
		Reload: func(reason string) {
			_ = c.Call(ctx, nodeapi.MethodReload, map[string]string{"reason": reason}, nil)
		},
		Quit:     detach,
		Finished: feed.Done,
	})
	p := tea.NewProgram(model, tea.WithAltScreen(), tea.WithContext(ctx), tea.WithOutput(out), tea.WithInput(os.Stdin))
	if _, err := p.Run(); err != nil && !errors.Is(err, tea.ErrProgramKilled) && !errors.Is(err, context.Canceled) {
		return fmt.Errorf("%s: %w", prefix, err)
	}
	select {
	case <-feed.Done:
		if ctx.Err() == nil {
			if ferr := feed.Err(); ferr != nil {
				return fmt.Errorf("%s: %w", prefix, ferr)
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "dashboard: the node on %s stopped\n", o.datadir)
			return nil
		}
	default:
	}
	fmt.Fprintf(cmd.ErrOrStderr(), "dashboard: detached; the node keeps running on %s\n", o.datadir)
	return nil
}
