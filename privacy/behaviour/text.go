package behaviour

import (
	"fmt"
	"strings"

	"github.com/bloomwatch/bloomwatch/internal/table"
)

// maxRows bounds the reloads and suspects the text report lists
// (the JSON lists them up to MaxListed).
const maxRows = 40

// WriteReport writes the behaviour attack's section of the report.
func WriteReport(b *strings.Builder, r *Report) {
	b.WriteString("\nbehaviour attack: what the client's timing points at, beyond what its filter matched\n")
	wrap(b, "peers' side "+r.Source+"; servers replayed with "+r.Rules+"'s relevance rules", wrapWidth)
	if r.Note != "" {
		fmt.Fprintf(b, "%s\n", r.Note)
		return
	}
	fmt.Fprintf(b, "%d blocks served, %d taken as new, %d transactions rebuilt as relayed; %d reloads to a peer that held a filter, "+
		"%d of them added elements, %d pointed at a sending", r.Servings, r.LiveBlocks, r.Relays, r.Reloads, r.PointingReloads, r.Pointed)
	if r.MedianDelay >= 0 {
		fmt.Fprintf(b, " (median %s s after it)", table.Num(r.MedianDelay))
	}
	fmt.Fprintf(b, "; %d runs asked again of the same peer\n", r.Refetches)
	if r.DroppedTxs > 0 {
		fmt.Fprintf(b, "%d transactions sent past the limit of %d were counted, not kept: candidates and suspects leave them out\n",
			r.DroppedTxs, MaxTxs)
	}
	if !r.HasTruth {
		b.WriteString("no --truth: the suspects are named, not scored\n")
	} else {
		wrap(b, "precision and recall with 95 % exact binomial intervals (Clopper-Pearson); chance: the 95 % range of the "+
			"precision of as many candidates picked at random (hypergeometric); the base rate is a count over every candidate; "+
			"p: the exact hypergeometric test, Holm-adjusted over the run's verdicts (raw p where no verdict is printed); "+
			"power: against suspects that are the wallet's halfway between the base rate and 1, at the family's Bonferroni "+
			"level: below 0.8 the score prints no verdict", wrapWidth)
	}
	t := table.New(b)
	fmt.Fprintln(t, "level\tcandidates\twallet\tbase rate\tsignal\tsuspects\thits\tprecision\t95 % (C-P)\tchance 95 % (hypergeom.)\trecall\t95 % (C-P)\tp\tpower\tverdict")
	num, nk := table.Num, table.NotKnown
	for _, lv := range []struct {
		name string
		l    Level
	}{{"blocks", r.Blocks}, {"txs", r.Txs}} {
		wallet, base := nk, nk
		if r.HasTruth {
			wallet, base = fmt.Sprint(lv.l.Wallet), num(lv.l.BaseRate)
		}
		for _, s := range lv.l.Scores {
			hits, prec, precCI, chance, rec, recCI, p, power := nk, nk, nk, nk, nk, nk, nk, nk
			verdict := s.Verdict
			if s.Verdict != VerdictNoTruth && s.Verdict != VerdictNoSuspects {
				hits, prec, p, power = fmt.Sprint(s.Hits), num(s.Precision), num(s.PValue)+" raw", fmt.Sprintf("%.2f", s.Power)
				if s.PHolm != nil {
					p = num(*s.PHolm) + " Holm"
				}
				if s.Verdict == VerdictNoPower {
					verdict = s.NoPowerText()
				}
				precCI = fmt.Sprintf("[%s, %s]", num(s.PrecisionCI.Lo), num(s.PrecisionCI.Hi))
				chance = fmt.Sprintf("[%s, %s]", num(s.Chance.Lo), num(s.Chance.Hi))
				rec, recCI = num(s.Recall), fmt.Sprintf("[%s, %s]", num(s.RecallCI.Lo), num(s.RecallCI.Hi))
			}
			fmt.Fprintf(t, "%s\t%d\t%s\t%s\t%s\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", lv.name, lv.l.Candidates, wallet, base,
				s.Signal, s.Suspects, hits, prec, precCI, chance, rec, recCI, p, power, verdict)
		}
	}
	_ = t.Flush() // a strings.Builder does not fail
	if len(r.SuspectBlocks) > 0 {
		parts := make([]string, 0, min(len(r.SuspectBlocks), maxRows))
		for i, s := range r.SuspectBlocks {
			if i == maxRows {
				parts = append(parts, "...")
				break
			}
			mark := ""
			if r.HasTruth && s.Wallet {
				mark = "*"
			}
			parts = append(parts, fmt.Sprintf("%d%s", s.Height, mark))
		}
		fmt.Fprintf(b, "suspect blocks (* the wallet's): %s\n", strings.Join(parts, ", "))
	}
	if len(r.ReloadList) == 0 {
		return
	}
	b.WriteString("reloads (pointer: the block pointed at, relay for mempool transactions, batch when the latest sending " +
		"was one block of a batch, - for none):\n")
	t = table.New(b)
	fmt.Fprintln(t, "seq\tpeer\theight\tadded\t± s.e.\tpoints\tpointer\ttxs\tdelay s")
	for i, rl := range r.ReloadList {
		if i == maxRows {
			fmt.Fprintf(t, "...\t%d more\n", len(r.ReloadList)-i)
			break
		}
		added, se := nk, nk
		if rl.Estimated {
			added, se = num(rl.Added), num(rl.AddedStdErr)
		}
		ptr, delay := "-", nk
		switch {
		case rl.Pointer >= 0:
			ptr = fmt.Sprint(rl.Pointer)
		case rl.Pointer == -1:
			ptr = "relay"
		case rl.Ambiguous:
			ptr = "batch"
		}
		if rl.DelaySeconds >= 0 {
			delay = num(rl.DelaySeconds)
		}
		fmt.Fprintf(t, "%d\t%s\t%d\t%s\t%s\t%t\t%s\t%d\t%s\n", rl.Seq, rl.Peer, rl.Height, added, se, rl.Pointing, ptr, rl.PointerTxs, delay)
	}
	_ = t.Flush()
}

// wrapWidth is the width the report's prose is wrapped at.
const wrapWidth = 100

// wrap writes text wrapped at width columns, on word boundaries.
func wrap(b *strings.Builder, text string, width int) {
	line := 0
	for i, word := range strings.Fields(text) {
		if i > 0 && line+1+len(word) > width {
			b.WriteString("\n")
			line = 0
		} else if i > 0 {
			b.WriteString(" ")
			line++
		}
		b.WriteString(word)
		line += len(word)
	}
	b.WriteString("\n")
}
