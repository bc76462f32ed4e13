package privacy

import (
	"fmt"
	"slices"
	"strings"

	"github.com/bloomwatch/bloomwatch/transcript"
)

// MaxReAskedListed bounds RequestSummary.ReAsked.
const MaxReAskedListed = 20

// RequestSummary is what the transcript's getdata records (version 3)
// show the peers that served them, without the reasons, which only the
// client knows: where each peer's requests start (the wallet's birthday
// as that peer sees it) and the blocks one peer was asked for more than
// once (after a reload a client asks again from the block whose
// transactions made it derive keys, so those point at the wallet; the
// requests experiment measures how much, docs/RESEARCH.md section 4).
type RequestSummary struct {
	// Records and Blocks count the getdata records and the blocks they
	// asked for.
	Records int   `json:"records"`
	Blocks  int64 `json:"blocks"`
	// FirstHeight is the lowest height any peer was asked for.
	FirstHeight int32 `json:"first_height"`
	// Peers counts the peers asked.
	Peers int `json:"peers"`
	// ReAskedBlocks counts (peer, height) pairs asked more than once;
	// ReAsked lists, oldest first and at most MaxReAskedListed, the
	// first height of each run of consecutive heights one peer was
	// asked for again.
	ReAskedBlocks int64   `json:"re_asked_blocks"`
	ReAsked       []int32 `json:"re_asked,omitempty"`
}

// SummarizeRequests reads getdata records as the peers that received
// them saw them. Records of other kinds are ignored; nil when there is
// no getdata record (transcripts before version 3).
func SummarizeRequests(recs []transcript.Record) *RequestSummary {
	type key struct {
		peer   string
		height int32
	}
	asked := map[key]int{}
	peers := map[string]bool{}
	s := &RequestSummary{}
	for _, r := range recs {
		if r.Kind != transcript.KindGetData || r.Count < 1 {
			continue
		}
		if s.Records == 0 || r.Height < s.FirstHeight {
			s.FirstHeight = r.Height
		}
		s.Records++
		s.Blocks += r.Count
		peers[r.Peer] = true
		for h := r.Height; h < r.Height+int32(min(r.Count, transcript.MaxGetDataCount)); h++ {
			asked[key{r.Peer, h}]++
		}
	}
	if s.Records == 0 {
		return nil
	}
	s.Peers = len(peers)
	var again []key
	for k, n := range asked {
		if n > 1 {
			s.ReAskedBlocks++
			again = append(again, k)
		}
	}
	slices.SortFunc(again, func(a, b key) int {
		if a.peer != b.peer {
			if a.peer < b.peer {
				return -1
			}
			return 1
		}
		return int(a.height) - int(b.height)
	})
	var starts []int32
	for i, k := range again {
		if i > 0 && again[i-1].peer == k.peer && again[i-1].height == k.height-1 {
			continue // inside a run
		}
		starts = append(starts, k.height)
	}
	slices.Sort(starts)
	starts = slices.Compact(starts)
	s.ReAsked = starts[:min(len(starts), MaxReAskedListed)]
	return s
}

// heights formats a list of heights, "..." after MaxReAskedListed.
func heights(hs []int32) string {
	parts := make([]string, len(hs))
	for i, h := range hs {
		parts[i] = fmt.Sprint(h)
	}
	out := strings.Join(parts, ", ")
	if len(hs) == MaxReAskedListed {
		out += ", ..."
	}
	return out
}
