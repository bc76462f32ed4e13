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
}

// Chart is one figure: a title, axis labels and its series.
type Chart struct {
	Title  string `json:"title"`
	XLabel string `json:"x_label"`
	YLabel string `json:"y_label"`
	// LogY draws the Y axis on a log scale.
	LogY   bool     `json:"log_y"`
	Series []Series `json:"series"`
}
