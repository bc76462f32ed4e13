//go:build manualdemo

package tui

import (
	"os"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/bloomwatch/bloomwatch/privacy"
	"github.com/bloomwatch/bloomwatch/spv"
)

func TestDemo(t *testing.T) {
	ev := make(chan spv.Event)
	rd := make(chan privacy.Reading, 10)
	lg := make(chan string, 10)
	quit := make(chan struct{})
	w := newTestWallet(t)
	go func() {
		for i, e := range scriptedEvents() {
			select {
			case ev <- e:
			case <-quit:
				return
			}
			if i%5 == 0 {
				time.Sleep(30 * time.Millisecond)
			}
		}
		for _, r := range scriptedReadings(t) {
			rd <- r
			time.Sleep(300 * time.Millisecond)
		}
		for _, l := range scriptedLog() {
			lg <- l
		}
	}()
	m := New(Config{Network: "regtest", Events: ev, Privacy: rd, Log: lg, Wallet: w,
		Reload: func(string) {}, Quit: func() { close(quit) }})
	p := tea.NewProgram(m, tea.WithAltScreen(), tea.WithInput(os.Stdin), tea.WithOutput(os.Stdout))
	if _, err := p.Run(); err != nil {
		t.Fatal(err)
	}
}
