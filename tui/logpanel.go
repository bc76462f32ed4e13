package tui

import (
	"fmt"
	"strconv"
	"strings"
)

// logPanel is the log pane: one line per node event (written by the
// dashboard, see state.apply) and the logger's lines that are not
// events (warnings, errors, the demo's chain events), newest at the
// bottom.
type logPanel struct{}

// title implements panel: how many lines are below the view when it is
// scrolled, and while the log has the focus, that enter shows its bottom
// line whole.
func (logPanel) title(m *Model, w int) string {
	t := "Log"
	if off := m.offset[PanelLog]; off > 0 {
		t += fmt.Sprintf("  (%d newer below)", off)
	}
	if m.focus == PanelLog && m.overlay == overlayNone {
		t += "  (enter: the bottom line whole; ↑/↓ scroll)"
	}
	return joinFit(w, "", t)
}

// bottomLogLine returns the log line at the bottom of the pane (the
// newest, or the one offset lines above it).
func (m *Model) bottomLogLine() (string, bool) {
	lg := m.st.log
	if lg.len() == 0 {
		return "", false
	}
	return lg.at(lg.len() - 1 - min(m.offset[PanelLog], lg.len()-1)), true
}

// logLinePanel is one log line read whole (enter on the log), wrapped to
// the width and scrolled like the detail view.
type logLinePanel struct{}

// title implements panel.
func (logLinePanel) title(m *Model, w int) string {
	return joinFit(w, "", "Log line")
}

// render implements panel.
func (logLinePanel) render(m *Model, w, h int) []string {
	lines := logLineLines(m.logLine, w)
	off := min(m.ovOff, max(len(lines)-h, 0))
	return lines[off:min(off+h, len(lines))]
}

// logLineLines wraps a log line for the log line view: at word
// boundaries, a word longer than the width split.
func logLineLines(l string, w int) []string {
	return wrap(l, max(w, 20))
}

// render implements panel: the log lines ending offset lines before the
// newest, each wrapped whole at word boundaries (the continuation rows
// indented under the message), as many as fit h rows; warnings and errors
// in the Bad style. When even the newest does not fit (a one-row pane),
// its first rows show, the last one ending in "…": tab gives the log the
// room to read it.
func (logPanel) render(m *Model, w, h int) []string {
	lg := m.st.log
	end := lg.len() - min(m.offset[PanelLog], max(lg.len()-1, 0))
	var rows [][]string // newest first
	n := 0
	for i := end - 1; i >= 0 && n < h; i-- {
		r := logRows(lg.at(i), w)
		if n+len(r) > h {
			if n == 0 {
				r = r[:h]
				r[h-1] = fit(r[h-1]+" …", w)
				rows = append(rows, r)
			}
			break
		}
		rows = append(rows, r)
		n += len(r)
	}
	out := make([]string, 0, h)
	for i := len(rows) - 1; i >= 0; i-- {
		warn := isWarning(rows[i][0])
		for _, l := range rows[i] {
			if warn {
				l = m.paint(&m.styles.Bad, l)
			}
			out = append(out, l)
		}
	}
	return out
}

// logIndent is the continuation rows' indent: the width of the time stamp
// and its space ("15:04:05 ").
const logIndent = 9

// logRows wraps one log line to w cells at word boundaries, the rows after
// the first indented by logIndent (a word longer than a row is split).
func logRows(l string, w int) []string {
	if w <= logIndent+8 || width(l) <= w {
		return []string{l}
	}
	l = strings.Join(strings.Fields(l), " ")
	first := wrap(l, w)
	if len(first) == 1 {
		return first
	}
	rest := strings.TrimSpace(strings.TrimPrefix(l, first[0]))
	out := []string{first[0]}
	pad := strings.Repeat(" ", logIndent)
	for _, r := range wrap(rest, w-logIndent) {
		out = append(out, pad+r)
	}
	return out
}

// logWidth is the log pane's body width in layout l.
func (m *Model) logWidth(l layout) int {
	if l.grid {
		return l.rightW - 2
	}
	return m.width
}

// logMaxOffset is the log pane's largest scroll offset at w x h: the one
// that shows the oldest line at the top.
func (m *Model) logMaxOffset(w, h int) int {
	lg := m.st.log
	n := 0
	for i := 0; i < lg.len(); i++ {
		n += len(logRows(lg.at(i), w))
		if n > h {
			return max(lg.len()-i, 0)
		}
	}
	return 0
}

// isWarning reports a pane line of level WARN or ERROR.
func isWarning(l string) bool {
	if len(l) < 14 || l[8] != ' ' {
		return false
	}
	rest := l[9:]
	return strings.HasPrefix(rest, "WARN ") || strings.HasPrefix(rest, "ERROR ")
}

// eventLogMsgs are the logger's messages for which the node also sends
// an event: the pane shows the event's line only.
var eventLogMsgs = map[string]bool{
	"peer connected": true, // spv.PeerConnected
	"peer gone":      true, // spv.PeerDisconnected
	"filterload":     true, // spv.FilterLoaded
	"synced":         true, // spv.SyncDone
	"at the tip, blocks awaiting an omission check": true, // spv.ChecksAwaited
	"reorg": true, // spv.Reorg
}

// compactLog turns one logger line into the pane's form. A slog text
// line ("time=18:16:49.481 level=INFO msg=synced height=590") loses its
// keys and milliseconds ("18:16:49 synced height=590"), keeps its level
// when it is not INFO, and is dropped (ok false) when an event line says
// the same. Any other line passes unchanged.
func compactLog(line string) (out string, ok bool) {
	rest := line
	var tm, level, msg string
attrs:
	for i := 0; i < 3; i++ {
		k, v, r, good := slogAttr(rest)
		if !good {
			break
		}
		switch k {
		case "time":
			tm = v
		case "level":
			level = v
		case "msg":
			msg = v
		default:
			break attrs
		}
		rest = r
	}
	if level == "" || msg == "" {
		return line, true
	}
	if (level == "INFO" || level == "DEBUG") && eventLogMsgs[msg] {
		return "", false
	}
	if i := strings.IndexByte(tm, '.'); i > 0 {
		tm = tm[:i]
	}
	if tm == "" {
		tm = "--:--:--"
	}
	var b strings.Builder
	b.WriteString(tm)
	b.WriteByte(' ')
	if level != "INFO" {
		b.WriteString(level)
		b.WriteByte(' ')
	}
	b.WriteString(msg)
	if rest = strings.TrimSpace(rest); rest != "" {
		b.WriteByte(' ')
		b.WriteString(rest)
	}
	return b.String(), true
}

// slogAttr reads one key=value pair from the start of s (a value may be
// quoted) and returns the rest after the separating space.
func slogAttr(s string) (key, val, rest string, ok bool) {
	eq := strings.IndexByte(s, '=')
	if eq <= 0 || strings.ContainsAny(s[:eq], " \"") {
		return "", "", s, false
	}
	key, s = s[:eq], s[eq+1:]
	if strings.HasPrefix(s, `"`) {
		q, err := strconv.QuotedPrefix(s)
		if err != nil {
			return "", "", s, false
		}
		if val, err = strconv.Unquote(q); err != nil {
			return "", "", s, false
		}
		s = s[len(q):]
	} else {
		sp := strings.IndexByte(s, ' ')
		if sp < 0 {
			sp = len(s)
		}
		val, s = s[:sp], s[sp:]
	}
	return key, val, strings.TrimPrefix(s, " "), true
}
