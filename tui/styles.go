package tui

import "github.com/charmbracelet/lipgloss"

// Styles are the dashboard's colours and borders, in one place.
type Styles struct {
	// Header is the top bar; HeaderKey its labels.
	Header    lipgloss.Style
	HeaderKey lipgloss.Style
	// Title is a panel title; FocusedTitle the focused panel's.
	Title        lipgloss.Style
	FocusedTitle lipgloss.Style
	// Border colours a panel's frame in the grid layout and its title
	// rule when stacked; FocusedBorder the focused panel's.
	Border        lipgloss.Style
	FocusedBorder lipgloss.Style
	// Label is a field name, Value its value, Dim secondary text.
	Label lipgloss.Style
	Value lipgloss.Style
	Dim   lipgloss.Style
	// Wallet marks the wallet's transactions, FalsePositive the others,
	// Bad errors and bans.
	Wallet        lipgloss.Style
	FalsePositive lipgloss.Style
	Bad           lipgloss.Style
	// TableHeader is the header row of a table, Selected the cursor row.
	TableHeader lipgloss.Style
	Selected    lipgloss.Style
	// BarFull and BarEmpty draw the sync progress bar; Chart the curve.
	BarFull  lipgloss.Style
	BarEmpty lipgloss.Style
	Chart    lipgloss.Style
	// Help is the key help line.
	Help lipgloss.Style
}

// DefaultStyles returns the default styles (ANSI 256 colours, degraded by
// lipgloss on smaller terminals).
func DefaultStyles() *Styles {
	accent := lipgloss.Color("39")
	dim := lipgloss.Color("245")
	return &Styles{
		Header:        lipgloss.NewStyle().Bold(true),
		HeaderKey:     lipgloss.NewStyle().Foreground(dim),
		Title:         lipgloss.NewStyle().Bold(true).Foreground(lipgloss.Color("252")),
		FocusedTitle:  lipgloss.NewStyle().Bold(true).Foreground(accent),
		Border:        lipgloss.NewStyle().Foreground(lipgloss.Color("240")),
		FocusedBorder: lipgloss.NewStyle().Foreground(accent),
		Label:         lipgloss.NewStyle().Foreground(dim),
		Value:         lipgloss.NewStyle(),
		Dim:           lipgloss.NewStyle().Foreground(dim),
		Wallet:        lipgloss.NewStyle().Foreground(lipgloss.Color("42")),
		FalsePositive: lipgloss.NewStyle().Foreground(lipgloss.Color("214")),
		Bad:           lipgloss.NewStyle().Foreground(lipgloss.Color("196")),
		TableHeader:   lipgloss.NewStyle().Bold(true).Foreground(lipgloss.Color("252")),
		Selected:      lipgloss.NewStyle().Reverse(true),
		BarFull:       lipgloss.NewStyle().Foreground(accent),
		BarEmpty:      lipgloss.NewStyle().Foreground(lipgloss.Color("238")),
		Chart:         lipgloss.NewStyle().Foreground(lipgloss.Color("213")),
		Help:          lipgloss.NewStyle().Foreground(dim),
	}
}
