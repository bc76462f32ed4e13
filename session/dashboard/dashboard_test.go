package dashboard

import (
	"bytes"
	"os"
	"testing"

	"github.com/bloomwatch/bloomwatch/session"
	"github.com/stretchr/testify/require"
)

// TestAttach checks the configuration Attach leaves: the dashboard on and
// the log teed to its pane, beside a tee already set. The dashboard itself
// is driven end to end by cmd/bloomwatch's TestDemoInTmux.
func TestAttach(t *testing.T) {
	var cfg session.Config
	ui := Attach(&cfg, os.Stdout, os.Stdin)
	require.NotNil(t, ui, "attach: dashboard %v, tee %v", cfg.Dashboard, cfg.LogTee)
	require.True(t, cfg.Dashboard, "attach: dashboard %v, tee %v", cfg.Dashboard, cfg.LogTee)
	require.False(t, cfg.LogTee == nil, "attach: dashboard %v, tee %v", cfg.Dashboard, cfg.LogTee)
	var own bytes.Buffer
	cfg = session.Config{LogTee: &own}
	Attach(&cfg, os.Stdout, os.Stdin)
	_, err := cfg.LogTee.Write([]byte("line\n"))
	require.NoError(t, err, "the caller's tee lost a line: %q", own.String())
	require.Equal(t, "line\n", own.String(), "the caller's tee lost a line: %q %v", own.String(), err)
}
