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

// title implements panel.
func (logPanel) title(m *Model, w int) string {
	t := "Log"
	if off := m.offset[PanelLog]; off > 0 {
		t += fmt.Sprintf("  (%d newer below)", off)
	}
	return t
}

// render implements panel: the h lines ending offset lines before the
// newest; warnings and errors in the Bad style.
func (logPanel) render(m *Model, _, h int) []string {
	lg := m.st.log
	off := min(m.offset[PanelLog], max(lg.len()-h, 0))
	end := lg.len() - off
	start := max(end-h, 0)
	out := make([]string, 0, h)
	for i := start; i < end; i++ {
		l := lg.at(i)
		if isWarning(l) {
			l = m.paint(&m.styles.Bad, l)
		}
		out = append(out, l)
	}
	return out
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
	"reorg":          true, // spv.Reorg
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
