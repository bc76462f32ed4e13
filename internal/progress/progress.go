// Package progress draws the advance of a long run (the callbacks of
// experiments.Config.Progress and btcdrpc.ExportConfig.Progress: a stage,
// the units done, the total) on a writer: a bar redrawn in place on a
// terminal, plain lines otherwise (at most one per tenth of a stage, and
// its end), or nothing.
package progress

import (
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/charmbracelet/x/term"
)

// Modes of New.
const (
	// Auto draws a bar when the writer is a terminal, lines otherwise.
	Auto  = "auto"
	Bar   = "bar"
	Lines = "lines"
	None  = "none"
)

// Drawing.
const (
	barWidth = 30
	// redraw is the shortest time between two bar redraws.
	redraw = 100 * time.Millisecond
	// lineStep is the percentage between two plain lines.
	lineStep = 10
	percent  = 100
)

// CheckMode returns an error naming mode when it is not one of the modes.
func CheckMode(mode string) error {
	switch mode {
	case Auto, Bar, Lines, None:
		return nil
	}
	return fmt.Errorf("%q: want auto, bar, lines or none", mode)
}

// IsTerminal reports whether w is a terminal: where Auto draws a bar,
// where bloomwatch sync and demo open the dashboard, and where --json
// indents. It asks the terminal driver (charmbracelet/x/term, bubbletea's
// own check), so another character device, /dev/null for one, is none.
func IsTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	rc, err := f.SyscallConn()
	if err != nil {
		return false
	}
	is := false
	if err := rc.Control(func(fd uintptr) { is = term.IsTerminal(fd) }); err != nil {
		return false
	}
	return is
}

// Drawer draws one run's progress. It is not safe for concurrent use:
// the runs that report progress call it from one goroutine.
type Drawer struct {
	w      io.Writer
	bar    bool
	off    bool
	stage  string
	last   time.Time
	lastPc int
	drawn  bool
}

// New returns the drawer for mode on w (an unknown mode draws lines).
func New(w io.Writer, mode string) *Drawer {
	return &Drawer{w: w, off: mode == None, bar: mode == Bar || mode == Auto && IsTerminal(w)}
}

// Report tells the drawer that stage has done done of total units.
// Stages come in order; a new stage ends the previous one's bar.
func (p *Drawer) Report(stage string, done, total int) {
	if p.off || total <= 0 {
		return
	}
	pc := done * percent / total
	if stage != p.stage {
		p.finishBar()
		p.stage, p.lastPc, p.last = stage, -lineStep, time.Time{}
	}
	if p.bar {
		if done < total && time.Since(p.last) < redraw {
			return
		}
		p.last = time.Now()
		fill := done * barWidth / total
		fmt.Fprintf(p.w, "\r%-8s [%s%s] %3d%% %d/%d", stage, strings.Repeat("=", fill), strings.Repeat(" ", barWidth-fill), pc, done, total)
		p.drawn = true
		return
	}
	if pc >= p.lastPc+lineStep || done == total {
		if done == total && p.lastPc == percent {
			return
		}
		p.lastPc = pc
		fmt.Fprintf(p.w, "%s: %d/%d (%d%%)\n", stage, done, total, pc)
	}
}

// finishBar ends a drawn bar's line.
func (p *Drawer) finishBar() {
	if p.bar && p.drawn {
		fmt.Fprintln(p.w)
		p.drawn = false
	}
}

// Done ends the display: a drawn bar's line is ended. Calling it twice
// is harmless.
func (p *Drawer) Done() { p.finishBar() }
