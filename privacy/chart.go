package privacy

// The chart model: plain data, no drawing. Report.Charts and the
// experiments (privacy/experiments) produce charts; package privacy/plot
// draws them with gonum/plot, and they marshal to JSON as they are.

// Series is one line of a chart.
type Series struct {
	Name string    `json:"name"`
	X    []float64 `json:"x"`
	Y    []float64 `json:"y"`
	// Points draws markers only (a measurement), not a line.
	Points bool `json:"points,omitempty"`
	// YLo and YHi, when set (one per point), are the bounds of an
	// interval around each Y (a Wilson or Poisson interval), drawn as
	// error bars. They are absolute values, not offsets.
	YLo []float64 `json:"y_lo,omitempty"`
	YHi []float64 `json:"y_hi,omitempty"`
	// Band draws YLo..YHi as a shaded band in the series' colour instead
	// of error bars; on a log axis a lower bound of 0 is drawn at the
	// axis floor (it does not turn the axis symmetric-logarithmic).
	Band bool `json:"band,omitempty"`
	// Reference marks a published figure: drawn as a large hollow
	// marker, never joined by a line, with Source in the legend.
	Reference bool   `json:"reference,omitempty"`
	Source    string `json:"source,omitempty"`
	// Group, when set, gives every series of the same group one colour
	// (a measurement and its formula).
	Group string `json:"group,omitempty"`
	// Pair, when set, draws the series of one pair (one setting measured
	// two ways, as UPDATE_NONE and UPDATE_ALL or re-fetched and filter
	// alone) in two shades of one hue: the first full, the second light,
	// with different markers.
	Pair string `json:"pair,omitempty"`
	// Span draws a Reference as a segment between its points: a
	// published figure given for a range of X ("fewer than 15"), not at
	// one X.
	Span bool `json:"span,omitempty"`
}

// Tick is a named position on an axis: an event ("restart", "new peer")
// or a round figure.
type Tick struct {
	Value float64 `json:"value"`
	Label string  `json:"label"`
}

// Chart is one figure: a title, axis labels and its series.
type Chart struct {
	Title  string `json:"title"`
	XLabel string `json:"x_label"`
	YLabel string `json:"y_label"`
	// LogY draws the Y axis on a log scale; when a series holds zeros
	// the axis becomes symmetric-logarithmic (linear around 0) so that
	// they are drawn, not dropped.
	LogY bool `json:"log_y"`
	// LogX draws the X axis on a log scale.
	LogX bool `json:"log_x,omitempty"`
	// XTicks, when set, are the only labelled X positions (named events
	// on an axis of block heights, or categories).
	XTicks []Tick   `json:"x_ticks,omitempty"`
	Series []Series `json:"series"`
	// Notes are printed beside the legend: what the figure measured
	// (universe, trials) and anything a reader must know.
	Notes []string `json:"notes,omitempty"`
}
