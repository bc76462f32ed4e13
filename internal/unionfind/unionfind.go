// Package unionfind partitions the integers [0, n) into disjoint sets:
// the coin clusters of the wallet's coin selection, the linked sessions of
// the crawler, the multi-input clusters of the population experiments, the
// factor groups of the joint privacy model, and the graph attack's linked
// addresses (its pruning and LinkClusters).
//
// Each set's representative is its smallest member, so the partition a
// sequence of unions gives does not depend on the order of the unions'
// arguments, and callers can use the representative as a stable label.
// Find halves paths as it walks; Union links the larger root under the
// smaller one and keeps each set's size.
package unionfind

// Sets is a partition of [0, n). The zero value is an empty partition;
// New makes one of n singletons.
type Sets struct {
	parent []int32
	size   []int32
}

// New returns n singleton sets, {0}, {1}, ..., {n-1}.
func New(n int) *Sets {
	s := &Sets{parent: make([]int32, n), size: make([]int32, n)}
	for i := range s.parent {
		s.parent[i], s.size[i] = int32(i), 1
	}
	return s
}

// Len returns n, the number of integers partitioned.
func (s *Sets) Len() int { return len(s.parent) }

// Find returns the representative of x's set: its smallest member.
func (s *Sets) Find(x int) int {
	i := int32(x)
	for s.parent[i] != i {
		s.parent[i] = s.parent[s.parent[i]]
		i = s.parent[i]
	}
	return int(i)
}

// Union merges the sets of a and b and reports whether they were apart.
func (s *Sets) Union(a, b int) bool {
	ra, rb := s.Find(a), s.Find(b)
	if ra == rb {
		return false
	}
	if rb < ra {
		ra, rb = rb, ra
	}
	s.parent[rb] = int32(ra)
	s.size[ra] += s.size[rb]
	return true
}

// Same reports whether a and b are in one set.
func (s *Sets) Same(a, b int) bool { return s.Find(a) == s.Find(b) }

// Size returns the number of members of x's set.
func (s *Sets) Size(x int) int { return int(s.size[s.Find(x)]) }
