// Package behavetest plays a light client and a chain for the tests of
// the behaviour attack, in package privacy/behaviour and in the meter and
// verdict tests of package privacy: a client that grows its filter and
// writes records, a synthetic chain of wallet payments and false
// positives, and a live run of one against the other.
package behavetest

import (
	"encoding/binary"
	"math/rand"
	"testing"
	"time"

	"github.com/bloomwatch/bloomwatch/bip37"
	"github.com/bloomwatch/bloomwatch/privacy/behaviour"
	"github.com/bloomwatch/bloomwatch/transcript"
	"github.com/btcsuite/btcd/chaincfg/chainhash"
)

// Client plays a light client for the behaviour attack: it holds a
// filter of Elems elements it grows, and feeds its records to Attack.
type Client struct {
	T      testing.TB
	Attack *behaviour.Attack
	// Seq and Now are the last record's sequence number and time.
	Seq   uint64
	Now   time.Time
	Elems int
}

// Filter returns the client's filter: Elems elements, one tweak.
func (c *Client) Filter() []byte {
	f, err := bip37.NewFilter(256, 0.0001, 7, bip37.UpdateAll)
	if err != nil {
		c.T.Fatal(err)
	}
	for i := 0; i < c.Elems; i++ {
		var e [8]byte
		binary.LittleEndian.PutUint64(e[:], uint64(i))
		f.Add(e[:])
	}
	return f.Serialize()
}

// Record feeds one record, 50 ms after the last.
func (c *Client) Record(r transcript.Record) {
	c.T.Helper()
	c.Seq++
	c.Now = c.Now.Add(50 * time.Millisecond)
	r.Seq, r.Time = c.Seq, c.Now
	if err := c.Attack.Observe(r); err != nil {
		c.T.Fatal(err)
	}
}

// Load sends the client's filter to peer at height h.
func (c *Client) Load(peer string, h int32) {
	c.Record(transcript.Record{Kind: transcript.KindFilterLoad, Peer: peer, Height: h, Filter: c.Filter()})
}

// TxID returns a distinct transaction id for transaction i of block h.
func TxID(h int32, i int) chainhash.Hash {
	var id chainhash.Hash
	binary.LittleEndian.PutUint32(id[:], uint32(h))
	id[4] = byte(i)
	return id
}

// Chain is a synthetic chain for the attack: which heights From..To hold
// a wallet transaction and how many false positives each block sends.
type Chain struct {
	From, To int32
	Wallet   map[int32]bool
	FPs      map[int32]int
}

// NewChain lays out blocks from..to: a wallet transaction in a block with
// probability 0.1 and one false positive with probability fp,
// independently (payments at regular intervals would make a wallet block
// followed by a longer gap than a false positive, which the "most recent
// block" rule would pick up).
func NewChain(rng *rand.Rand, from, to int32, fp float64) Chain {
	c := Chain{From: from, To: to, Wallet: map[int32]bool{}, FPs: map[int32]int{}}
	for h := from; h <= to; h++ {
		c.Wallet[h] = rng.Float64() < 0.1
		if rng.Float64() < fp {
			c.FPs[h] = 1
		}
	}
	return c
}

// Sent returns what a peer sends in block h.
func (c Chain) Sent(h int32) []behaviour.SentTx {
	var out []behaviour.SentTx
	if c.Wallet[h] {
		out = append(out, behaviour.SentTx{ID: TxID(h, 0), Wallet: true})
	}
	for i := 0; i < c.FPs[h]; i++ {
		out = append(out, behaviour.SentTx{ID: TxID(h, 1+i)})
	}
	return out
}

// RunLive serves every block of c to one peer, one getdata each, and
// reloads when reload says so after the block. The client's elements
// grow by one for each wallet block, or, with growAtReload, by one at
// each reload whatever it received (a reserve of keys topped up on the
// schedule: the reload's size says nothing).
func RunLive(t testing.TB, c Chain, reload func(h int32) bool, growAtReload bool) behaviour.Reading {
	t.Helper()
	cl := &Client{T: t, Attack: behaviour.NewAttack(true), Now: time.Unix(1_700_000_000, 0), Elems: 20}
	cl.Load("p", c.From)
	for h := c.From; h <= c.To; h++ {
		cl.Record(transcript.Record{Kind: transcript.KindGetData, Peer: "p", Height: h, Count: 1})
		cl.Attack.Sent("p", h, c.Sent(h))
		if c.Wallet[h] && !growAtReload {
			cl.Elems++
		}
		if reload(h) {
			if growAtReload {
				cl.Elems++
			}
			cl.Load("p", h)
		}
	}
	return cl.Attack.Reading()
}

// Scheduled returns a reload schedule of its own: every 6 to 14 blocks.
func Scheduled(rng *rand.Rand, from int32) func(h int32) bool {
	next := from + 6 + int32(rng.Intn(9))
	return func(h int32) bool {
		if h < next {
			return false
		}
		next = h + 6 + int32(rng.Intn(9))
		return true
	}
}
