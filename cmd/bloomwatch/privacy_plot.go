package main

import (
	"io"

	"github.com/bloomwatch/bloomwatch/privacy"
	"github.com/bloomwatch/bloomwatch/privacy/plot"
)

// writeChartsPNG draws the charts, stacked, into a PNG file (see
// plot.WritePNG), removing the file if drawing fails.
func writeChartsPNG(path string, charts []privacy.Chart) error {
	return writeFileWith(path, func(w io.Writer) error { return plot.WritePNG(w, charts) })
}
