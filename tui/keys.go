package tui

import "github.com/charmbracelet/bubbles/key"

// KeyMap is the dashboard's key bindings; it implements help.KeyMap.
type KeyMap struct {
	// Help toggles the full help.
	Help key.Binding
	// Focus and Back cycle the focus through the scrollable panels.
	Focus key.Binding
	Back  key.Binding
	// Up, Down, PageUp, PageDown, Top and Bottom scroll the focused
	// panel.
	Up       key.Binding
	Down     key.Binding
	PageUp   key.Binding
	PageDown key.Binding
	Top      key.Binding
	Bottom   key.Binding
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
		FP:       key.NewBinding(key.WithKeys("f"), key.WithHelp("f", "hide/show false positives")),
		Reload:   key.NewBinding(key.WithKeys("r"), key.WithHelp("r", "reload filter")),
		Quit:     key.NewBinding(key.WithKeys("q", "ctrl+c"), key.WithHelp("q", "quit")),
	}
}

// ShortHelp implements help.KeyMap.
func (k KeyMap) ShortHelp() []key.Binding {
	return []key.Binding{k.Help, k.Focus, k.FP, k.Reload, k.Quit}
}

// FullHelp implements help.KeyMap.
func (k KeyMap) FullHelp() [][]key.Binding {
	return [][]key.Binding{
		{k.Focus, k.Back, k.Up, k.Down},
		{k.PageUp, k.PageDown, k.Top, k.Bottom},
		{k.FP, k.Reload, k.Help, k.Quit},
	}
}
