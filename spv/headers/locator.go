package headers

import (
	"fmt"

	"github.com/btcsuite/btcd/blockchain"
	"github.com/btcsuite/btcd/chaincfg/chainhash"
)

// Locator returns a block locator from the best tip: the tip and its 10
// parents, then hashes at doubling distances, ending with genesis (btcd's
// blockLocator).
func (s *Store) Locator() blockchain.BlockLocator {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.locator(s.tipIndex())
}

// LocatorFrom returns a block locator starting at a stored header of any
// branch.
func (s *Store) LocatorFrom(hash chainhash.Hash) (blockchain.BlockLocator, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	i, ok := s.index.lookup(&s.nodes, &hash)
	if !ok {
		return nil, fmt.Errorf("%w: header %v", ErrNotFound, hash)
	}
	return s.locator(i), nil
}

func (s *Store) locator(i int32) blockchain.BlockLocator {
	loc := make(blockchain.BlockLocator, 0, 12+32)
	step := int32(1)
	for {
		n := s.nodes.at(i)
		h := n.hash
		loc = append(loc, &h)
		if n.height == 0 {
			return loc
		}
		i = s.ancestor(i, max(n.height-step, 0))
		if len(loc) > 10 {
			step *= 2
		}
	}
}
