package tui

import "github.com/charmbracelet/bubbles/key"

// KeyMap is the dashboard's key bindings; it implements help.KeyMap (the
// help line shows the keys of the current view: see keyHelp).
type KeyMap struct {
	// Help opens (and closes) the help view: every key and what each
	// figure means.
	Help key.Binding
	// Focus and Back cycle the focus through the scrollable panels.
	Focus key.Binding
	Back  key.Binding
	// Up, Down, PageUp, PageDown, Top and Bottom move the matched
	// table's cursor, or scroll the focused panel or the detail view.
	Up       key.Binding
	Down     key.Binding
	PageUp   key.Binding
	PageDown key.Binding
	Top      key.Binding
	Bottom   key.Binding
	// Open shows the detail of the matched transaction under the cursor;
	// Close goes back from a detail or the filter picture, and clears a
	// search.
	Open  key.Binding
	Close key.Binding
	// Search starts a search of the matched table (as / in less); Apply
	// ends the typing and keeps the search.
	Search key.Binding
	Apply  key.Binding
	// Sort cycles the matched table's order (arrival, height, amount);
	// Reverse flips its direction.
	Sort    key.Binding
	Reverse key.Binding
	// Bits shows the loaded filter as a picture.
	Bits key.Binding
	// FP hides or shows the false positives in the matched table.
	FP key.Binding
	// Reload asks the node for a fresh filterload (Config.Reload).
	Reload key.Binding
	// Quit calls Config.Quit and ends the program.
	Quit key.Binding
}

// DefaultKeyMap returns the default bindings.
func DefaultKeyMap() KeyMap {
	return KeyMap{
		Help:     key.NewBinding(key.WithKeys("?"), key.WithHelp("?", "help")),
		Focus:    key.NewBinding(key.WithKeys("tab"), key.WithHelp("tab", "next panel")),
		Back:     key.NewBinding(key.WithKeys("shift+tab"), key.WithHelp("S-tab", "prev panel")),
		Up:       key.NewBinding(key.WithKeys("up", "k"), key.WithHelp("↑/k", "up")),
		Down:     key.NewBinding(key.WithKeys("down", "j"), key.WithHelp("↓/j", "down")),
		PageUp:   key.NewBinding(key.WithKeys("pgup"), key.WithHelp("pgup", "page up")),
		PageDown: key.NewBinding(key.WithKeys("pgdown"), key.WithHelp("pgdn", "page down")),
		Top:      key.NewBinding(key.WithKeys("home", "g"), key.WithHelp("home/g", "top")),
		Bottom:   key.NewBinding(key.WithKeys("end", "G"), key.WithHelp("end/G", "bottom")),
		Open:     key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "explain tx")),
		Close:    key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "back")),
		Search:   key.NewBinding(key.WithKeys("/"), key.WithHelp("/", "search")),
		Apply:    key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "keep search")),
		Sort:     key.NewBinding(key.WithKeys("s"), key.WithHelp("s", "sort")),
		Reverse:  key.NewBinding(key.WithKeys("S"), key.WithHelp("S", "reverse")),
		Bits:     key.NewBinding(key.WithKeys("b"), key.WithHelp("b", "filter bits")),
		FP:       key.NewBinding(key.WithKeys("f"), key.WithHelp("f", "hide/show false positives")),
		Reload:   key.NewBinding(key.WithKeys("r"), key.WithHelp("r", "reload filter")),
		Quit:     key.NewBinding(key.WithKeys("q", "ctrl+c"), key.WithHelp("q", "quit")),
	}
}

// ShortHelp implements help.KeyMap: the main view's keys.
func (k KeyMap) ShortHelp() []key.Binding {
	return []key.Binding{k.Open, k.Search, k.Focus, k.Bits, k.Sort, k.FP, k.Reload, k.Help, k.Quit}
}

// FullHelp implements help.KeyMap.
func (k KeyMap) FullHelp() [][]key.Binding {
	return [][]key.Binding{
		{k.Focus, k.Back, k.Up, k.Down},
		{k.PageUp, k.PageDown, k.Top, k.Bottom},
		{k.Open, k.Close, k.Search, k.Bits},
		{k.Sort, k.Reverse, k.FP, k.Reload},
		{k.Help, k.Quit},
	}
}

// keyHelp is the help line's key map for one view. must are the keys of
// short the help line keeps at any width (the way out and the help):
// the others are dropped, last first, when the line does not fit.
type keyHelp struct {
	short []key.Binding
	full  [][]key.Binding
	must  []key.Binding
}

// ShortHelp implements help.KeyMap.
func (h keyHelp) ShortHelp() []key.Binding { return h.short }

// FullHelp implements help.KeyMap.
func (h keyHelp) FullHelp() [][]key.Binding { return h.full }

// helpKeys returns the keys of the current view for the help line.
func (m *Model) helpKeys() keyHelp {
	k := m.keys
	switch {
	case m.searching:
		b := []key.Binding{k.Apply, k.Close, k.Up, k.Down}
		return keyHelp{short: b, full: [][]key.Binding{b}, must: b[:2]}
	case m.overlay == overlayDetail:
		b := []key.Binding{k.Close, k.Up, k.Down, k.PageUp, k.PageDown, k.Bits, k.Quit}
		return keyHelp{short: b, full: [][]key.Binding{b[:3], b[3:]}, must: []key.Binding{k.Close, k.Quit}}
	case m.overlay == overlayBits:
		b := []key.Binding{k.Close, k.Reload, k.Quit}
		return keyHelp{short: b, full: [][]key.Binding{b}, must: []key.Binding{k.Close, k.Quit}}
	case m.overlay == overlayHelp, m.overlay == overlayLogLine:
		b := []key.Binding{k.Close, k.Up, k.Down, k.Quit}
		return keyHelp{short: b, full: [][]key.Binding{b}, must: []key.Binding{k.Close, k.Quit}}
	}
	return keyHelp{short: k.ShortHelp(), full: k.FullHelp(), must: []key.Binding{k.Help, k.Quit}}
}

// fitted returns the keys of h's short help that fit w cells once drawn
// by view: every key of must, and of the others as many as fit, in
// order, so that a narrow terminal loses "sort" before "? help" and
// "q quit".
func (h keyHelp) fitted(w int, view func([]key.Binding) string) []key.Binding {
	isMust := func(b key.Binding) bool {
		for _, x := range h.must {
			if x.Help() == b.Help() {
				return true
			}
		}
		return false
	}
	keep := make([]bool, len(h.short))
	pick := func() []key.Binding {
		var out []key.Binding
		for i, b := range h.short {
			if keep[i] || isMust(b) {
				out = append(out, b)
			}
		}
		return out
	}
	for i, b := range h.short {
		if isMust(b) {
			continue
		}
		keep[i] = true
		if width(view(pick())) > w {
			keep[i] = false
		}
	}
	return pick()
}
