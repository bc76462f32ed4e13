package main

import (
	"fmt"
	"sort"
	"strings"
)

// Client kinds: which program a client variant runs.
const (
	kindBloomwatch = "bloomwatch"
	kindMinimal    = "minimal"
	kindNeutrino   = "neutrino"
)

// clientSpec is one client variant the bench can run: a program and how it
// is started.
type clientSpec struct {
	// kind is the program: kindBloomwatch (the real binary), kindMinimal
	// (this bench re-executed as a child) or kindNeutrino (bench/neutrino,
	// built by the bench).
	kind string
	// xpub gives bloomwatch the BIP84 account key (gap-limit discovery)
	// instead of the address list.
	xpub bool
	// peers is how many btcd servers the client connects to (1 or 2; the
	// second serves the same chain from its own copy).
	peers int
	// args are extra `bloomwatch sync` flags.
	args []string
	// bwCapacity sizes the minimal loop's filter as bloomwatch does
	// (filterpolicy.FilterCapacity of the element count) instead of its own
	// max(1000, 10 x addresses).
	bwCapacity bool
	// base runs the --bw-base build of bloomwatch instead of the one
	// measured.
	base bool
	// doc says what the variant is, for --help and the README.
	doc string
}

// clientSpecs are the client variants by name.
var clientSpecs = map[string]clientSpec{
	"bloomwatch":           {kind: kindBloomwatch, peers: 1, doc: "bloomwatch sync given the address list, one peer"},
	"bloomwatch-xpub":      {kind: kindBloomwatch, peers: 1, xpub: true, doc: "bloomwatch sync given the BIP84 vpub (gap-limit discovery), one peer"},
	"bloomwatch-base":      {kind: kindBloomwatch, peers: 1, base: true, doc: "bloomwatch as the --bw-base build, given the address list, one peer"},
	"bloomwatch-xpub-base": {kind: kindBloomwatch, peers: 1, xpub: true, base: true, doc: "bloomwatch as the --bw-base build, given the BIP84 vpub, one peer"},
	"bloomwatch-2peers": {kind: kindBloomwatch, peers: 2, args: []string{"--check-every", "-1"},
		doc: "address list, two btcd peers, omission checks off (--check-every -1)"},
	"bloomwatch-check20": {kind: kindBloomwatch, peers: 2, args: []string{"--check-every", "20"},
		doc: "address list, two btcd peers, a sampled cross-peer check (--check-every 20: 1 block in 20 at random)"},
	"bloomwatch-check1": {kind: kindBloomwatch, peers: 2, args: []string{"--check-every", "1"},
		doc: "address list, two btcd peers, every block asked again from the second (--check-every 1)"},
	"bloomwatch-full20": {kind: kindBloomwatch, peers: 1, args: []string{"--full-block-every", "20"},
		doc: "address list, one peer, 1 block in 20 fetched whole from it (--full-block-every 20)"},
	"bloomwatch-full1": {kind: kindBloomwatch, peers: 1, args: []string{"--full-block-every", "1"},
		doc: "address list, one peer, every block fetched whole as well (--full-block-every 1)"},
	"minimal": {kind: kindMinimal, peers: 1, doc: "minimal BIP37 loop, filter capacity max(1000, 10 x addresses) at --fp-rate"},
	"minimal-bwcap": {kind: kindMinimal, peers: 1, bwCapacity: true,
		doc: "minimal BIP37 loop with bloomwatch's filter sizing (2 x elements rounded up to a power of two)"},
	"neutrino": {kind: kindNeutrino, peers: 1, doc: "lightninglabs/neutrino (BIP157/158)"},
	"bloomwatch-bip158": {kind: kindBloomwatch, peers: 1, args: []string{"--protocol", "bip158"},
		doc: "bloomwatch sync over BIP157/158 (--protocol bip158) given the address list, one peer"},
}

// lookupClient returns the spec of a client name.
func lookupClient(name string) (clientSpec, error) {
	s, ok := clientSpecs[name]
	if !ok {
		return clientSpec{}, fmt.Errorf("unknown client %q (known: %s)", name, strings.Join(clientNames(), ", "))
	}
	return s, nil
}

// clientNames lists the known client names, sorted.
func clientNames() []string {
	names := make([]string, 0, len(clientSpecs))
	for n := range clientSpecs {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// peersNeeded is the largest number of btcd servers the clients need.
func peersNeeded(clients []string) int {
	n := 1
	for _, c := range clients {
		if s, ok := clientSpecs[c]; ok {
			n = max(n, s.peers)
		}
	}
	return n
}
