package scan

import (
	"fmt"
	"io"
	"strings"

	"github.com/bloomwatch/bloomwatch/internal/table"
)

// WriteText writes the report as `bloomwatch privacy scan` prints it: the
// time and rate, each filter's matches beside the expected count, and
// with a baseline the one-core rates and what btcutil/bloom would take for
// the same candidates on the scan's workers.
func (r *SyntheticReport) WriteText(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "scanned %d synthetic candidates through %d filter(s) in %.2f s (%.2f s CPU): %.1f M/s (%.1f M/s per core, %d workers)\n",
		r.Candidates, len(r.Filters), r.Seconds, r.CPUSeconds, r.PerSec/1e6, r.PerSecPerCore/1e6, r.Workers)
	for j, f := range r.Filters {
		fmt.Fprintf(&b, "filter %d: %d bytes, k=%d, fp rate %s: %d matched, expected %.1f +- %.1f\n",
			j, f.Bytes, f.HashFuncs, table.Num(f.FPRate), f.Matched, f.Expected, f.Sigma)
	}
	if bl := r.Baseline; bl != nil {
		fmt.Fprintf(&b, "baseline, one core, first %d candidates through filter 0, alternated: scan %.1f M/s, bip37 Matches %.1f M/s, btcutil/bloom %.1f M/s; scan/btcutil ratio %.2f, Matches/btcutil ratio %.2f (same matches: %v)\n",
			bl.Candidates, bl.ScanPerSec/1e6, bl.Bip37PerSec/1e6, bl.BtcutilPerSec/1e6, bl.ScanRatio, bl.Ratio, bl.Agree)
		fmt.Fprintf(&b, "btcutil/bloom at its rate on %d cores: %.2f s for these %d candidates (scan: %.2f s)\n",
			r.Workers, float64(r.Candidates)/bl.BtcutilPerSec/float64(r.Workers), r.Candidates, r.Seconds)
	}
	_, err := io.WriteString(w, b.String())
	return err
}
