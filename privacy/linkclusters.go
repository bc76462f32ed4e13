package privacy

import (
	"context"
	"sort"

	"github.com/bloomwatch/bloomwatch/internal/unionfind"
	"github.com/bloomwatch/bloomwatch/privacy/element"
	"github.com/bloomwatch/bloomwatch/privacy/scan"
)

// LinkKinds selects the links LinkClusters follows.
type LinkKinds uint8

const (
	// CoSpendLinks are common-input ownership: a transaction spends
	// from both addresses (the multi-input heuristic).
	CoSpendLinks LinkKinds = linkCoSpend
	// ChangeLinks are a transaction spending from one and paying the
	// other.
	ChangeLinks LinkKinds = linkChange
	// GraphLinks are both, the links of the graph attack (stage
	// "graph" of Analyze).
	GraphLinks = CoSpendLinks | ChangeLinks
)

// Clustering is a partition of elements by the transaction-graph links
// between them.
type Clustering struct {
	// Of gives each element's cluster: the index of its first element.
	Of []int
	// Sizes lists the clusters' sizes, largest first.
	Sizes []int
}

// Largest returns the size of the largest cluster (0 without elements).
func (c *Clustering) Largest() int {
	if len(c.Sizes) == 0 {
		return 0
	}
	return c.Sizes[0]
}

// MeanSeen returns the mean size of the cluster an element is in: how
// many of the elements an observer links to one of them, on average.
func (c *Clustering) MeanSeen() float64 {
	if len(c.Of) == 0 {
		return 0
	}
	var s float64
	for _, n := range c.Sizes {
		s += float64(n * n)
	}
	return s / float64(len(c.Of))
}

// LinkClusters groups elements (filter elements of addresses, as
// outputs push them: a wallet's TruthElements) by the links between them
// that the graph attack finds on ch (buildLinkGraph's walk of every
// block), of the kinds asked. Elements no output of ch pays are clusters
// of their own.
func LinkClusters(ctx context.Context, ch element.Chain, elements [][]byte, kinds LinkKinds) (*Clustering, error) {
	hits := make([]scan.Hit, len(elements))
	for i, e := range elements {
		hits[i] = scan.Hit{Candidate: element.Candidate{Forms: [][]byte{e}}}
	}
	g, err := buildLinkGraph(ctx, ch, hits)
	if err != nil {
		return nil, err
	}
	sets := unionfind.New(len(elements))
	for i, e := range g.edges {
		if LinkKinds(g.kinds[i])&kinds != 0 {
			sets.Union(int(e[0]), int(e[1]))
		}
	}
	c := &Clustering{Of: make([]int, len(elements))}
	size := map[int]int{}
	for i := range elements {
		c.Of[i] = sets.Find(i)
		size[c.Of[i]]++
	}
	for _, n := range size {
		c.Sizes = append(c.Sizes, n)
	}
	sort.Sort(sort.Reverse(sort.IntSlice(c.Sizes)))
	return c, nil
}
