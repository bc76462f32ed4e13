package privacy

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/bloomwatch/bloomwatch/internal/table"
)

// WriteTable prints the BIP158 leak, beside BIP37's last figures for the
// same wallet when bip37 (the analysis of its BIP37 transcript) is given.
func (r *BlockRequestReport) WriteTable(w io.Writer, bip37 *Report) error {
	var b strings.Builder
	q := r.Requests
	fmt.Fprintf(&b, "BIP158: filters asked from height %d (the birthday a peer sees) in %d getcfilters; %d whole blocks asked", q.FiltersFrom, q.FilterRequests, len(q.Blocks))
	if q.Checks > 0 {
		fmt.Fprintf(&b, ", %d more to settle filter-header conflicts", q.Checks)
	}
	b.WriteString("\n")
	for _, p := range sortedKeys(q.PerPeer) {
		fmt.Fprintf(&b, "  %s served %d blocks\n", p, q.PerPeer[p])
	}
	fmt.Fprintf(&b, "BIP158: %d candidates are paid or spent in heights %d..%d; %d of them appear only in requested blocks\n",
		r.Appearing, r.From, r.To, r.Candidates)
	if r.HasTruth {
		fmt.Fprintf(&b, "BIP158: %d requested blocks hold a wallet candidate, %d are false positives", r.WalletBlocks, r.FalsePositiveBlocks)
		if r.FPBlocksCI != nil {
			fmt.Fprintf(&b, " (mean 95 %% %s; BIP158's rate predicts %s)", interval(r.FPBlocksCI), table.Num(r.ExpectedFPBlocks))
		}
		b.WriteString("\n")
	}
	b.WriteString("BIP158 has no mempool filtering: an unconfirmed payment is neither seen nor leaked; the timing of a block\n" +
		"request shows nothing more than the request itself (nothing else is sent after a wallet block).\n\n")
	t := table.New(&b)
	fmt.Fprintln(t, "protocol\tpeer sees\tcandidates\twallet\tprecision\tentropy bits")
	if r.HasTruth {
		fmt.Fprintf(t, "bip158\t%d blocks asked\t%d\t%d\t%s\t%s\n", len(q.Blocks), r.Candidates, r.Members, table.Num(r.Precision), table.Num(r.Entropy))
	} else {
		fmt.Fprintf(t, "bip158\t%d blocks asked\t%d\t\t\t\n", len(q.Blocks), r.Candidates)
	}
	if bip37 != nil && len(bip37.Curves) > 0 {
		for _, c := range bip37.Curves {
			if len(c.Points) == 0 || c.Stage == StageSaturation {
				continue // not a set of candidates
			}
			p := c.Points[len(c.Points)-1]
			if p.Scored {
				fmt.Fprintf(t, "bip37 %s\t%d filters\t%d\t%d\t%s %s\t%s %s\n", c.Stage, p.Filters, p.Matched, p.TruePositives,
					table.Num(p.Precision), interval(p.PrecisionCI), table.Num(p.Entropy), interval(p.EntropyCI))
			} else {
				fmt.Fprintf(t, "bip37 %s\t%d filters\t%d\t\t\t\n", c.Stage, p.Filters, p.Matched)
			}
		}
	}
	if err := t.Flush(); err != nil {
		return err
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// sortedKeys returns m's keys in order.
func sortedKeys(m map[string]int) []string { return slices.Sorted(maps.Keys(m)) }
