package dashboard

import (
	"bytes"
	"os"
	"testing"

	"github.com/bloomwatch/bloomwatch/session"
)

// TestAttach checks the configuration Attach leaves: the dashboard on and
// the log teed to its pane, beside a tee already set. The dashboard itself
// is driven end to end by cmd/bloomwatch's TestDemoInTmux.
func TestAttach(t *testing.T) {
	var cfg session.Config
	if ui := Attach(&cfg, os.Stdout, os.Stdin); ui == nil || !cfg.Dashboard || cfg.LogTee == nil {
		t.Fatalf("attach: dashboard %v, tee %v", cfg.Dashboard, cfg.LogTee)
	}
	var own bytes.Buffer
	cfg = session.Config{LogTee: &own}
	Attach(&cfg, os.Stdout, os.Stdin)
	if _, err := cfg.LogTee.Write([]byte("line\n")); err != nil || own.String() != "line\n" {
		t.Fatalf("the caller's tee lost a line: %q %v", own.String(), err)
	}
}
