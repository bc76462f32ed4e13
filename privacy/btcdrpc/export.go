package btcdrpc

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"os"
	"slices"

	"github.com/bloomwatch/bloomwatch/filterpolicy"
	"github.com/bloomwatch/bloomwatch/privacy/element"
	"github.com/bloomwatch/bloomwatch/privacy/scan"
	"github.com/btcsuite/btcd/btcutil"
	"github.com/btcsuite/btcd/wire"
)

// The universe exporter: it reads a chain block by
// block and writes its candidates as an element file, the format
// element.FileUniverse streams, in bounded memory. Every observation (a
// script first paid, a public key revealed by a spend, an output created
// or spent) is written to one of Partitions spill files chosen by a hash
// of the candidate (or outpoint) it concerns; each partition is then
// grouped alone, so memory holds one partition, about 1/Partitions of the
// chain's observations, never the whole universe. Candidates come out
// grouped by partition, sorted by primary form within one: not in order
// of first payment (FirstSeen carries that).
//
// The two universes are the analyzer's (element.ChainUniverse and
// element.ChainOutpointUniverse): without Outpoints, each push paid on
// chain with the public key a spend revealed as its second form (and
// [hash160, key] for bare-key outputs); with Outpoints, each single-push
// output's push with the outpoints of its outputs unspent at the last
// height, oldest first.

// ExportConfig shapes an export.
type ExportConfig struct {
	// UpTo is the last height exported (< 0: the chain's tip).
	UpTo int32
	// Outpoints exports the outpoint universe instead of the pubkey one.
	Outpoints bool
	// TempDir holds the spill files (empty: os.TempDir()); they are
	// removed when the export ends.
	TempDir string
	// Partitions is the number of spill files (0: DefaultPartitions).
	// Memory is about the chain's observations / Partitions.
	Partitions int
	// Progress, when set, is told of the blocks read (stage "blocks") and
	// the partitions written (stage "partitions").
	Progress func(stage string, done, total int)
}

// DefaultPartitions is the default number of spill files: a mainnet
// chain's 2.5 billion outputs come to about 40 M observations each.
const DefaultPartitions = 64

// maxPartitions bounds the open spill files.
const maxPartitions = 4096

// ExportStats counts what an export wrote.
type ExportStats struct {
	Blocks     int    `json:"blocks"`
	Candidates uint64 `json:"candidates"`
	// MultiForm counts the candidates with more than one form (a
	// revealed public key, or unspent outpoints).
	MultiForm uint64 `json:"multi_form"`
	// Observations counts the records spilled; MaxPartition the most held
	// in memory at once.
	Observations uint64 `json:"observations"`
	MaxPartition uint64 `json:"max_partition"`
}

// ErrExport wraps the exporter's own failures (spill files, a malformed
// spill record).
var ErrExport = errors.New("export universe")

// Observation kinds in the spill files.
const (
	obsPaid     byte = 'S' // key: primary form; form: a further form (bare key); height
	obsRevealed byte = 'K' // key: hash160; form: the public key
	obsCreated  byte = 'O' // key: outpoint; form: the push it pays; order
	obsSpent    byte = 'X' // key: outpoint
	obsHeld     byte = 'P' // key: push; form: an unspent outpoint; order
)

// observation is one spilled record.
type observation struct {
	kind  byte
	key   []byte
	form  []byte
	value uint64 // height or creation order
}

// spill is a set of partition files.
type spill struct {
	files []*os.File
	bufs  []*bufio.Writer
	count []uint64
}

// newSpill creates n partition files in dir.
func newSpill(dir, prefix string, n int) (*spill, error) {
	s := &spill{}
	for i := range n {
		f, err := os.CreateTemp(dir, fmt.Sprintf("%s-%04d-*", prefix, i))
		if err != nil {
			s.remove()
			return nil, fmt.Errorf("%w: %w", ErrExport, err)
		}
		s.files = append(s.files, f)
		s.bufs = append(s.bufs, bufio.NewWriter(f))
		s.count = append(s.count, 0)
	}
	return s, nil
}

// partition returns the partition of key.
func (s *spill) partition(key []byte) int {
	h := fnv.New64a()
	_, _ = h.Write(key)
	return int(h.Sum64() % uint64(len(s.files)))
}

// put appends o to its key's partition.
func (s *spill) put(o observation) error {
	i := s.partition(o.key)
	w := s.bufs[i]
	var hdr [2 + binary.MaxVarintLen64]byte
	hdr[0], hdr[1] = o.kind, byte(len(o.key))
	n := binary.PutUvarint(hdr[2:], o.value)
	if _, err := w.Write(hdr[:2+n]); err != nil {
		return fmt.Errorf("%w: %w", ErrExport, err)
	}
	if _, err := w.Write(o.key); err != nil {
		return fmt.Errorf("%w: %w", ErrExport, err)
	}
	if err := w.WriteByte(byte(len(o.form))); err != nil {
		return fmt.Errorf("%w: %w", ErrExport, err)
	}
	if _, err := w.Write(o.form); err != nil {
		return fmt.Errorf("%w: %w", ErrExport, err)
	}
	s.count[i]++
	return nil
}

// read returns partition i's observations.
func (s *spill) read(i int) ([]observation, error) {
	if err := s.bufs[i].Flush(); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrExport, err)
	}
	raw, err := os.ReadFile(s.files[i].Name())
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrExport, err)
	}
	out := make([]observation, 0, s.count[i])
	r := bytes.NewReader(raw)
	for r.Len() > 0 {
		var o observation
		kind, err1 := r.ReadByte()
		klen, err2 := r.ReadByte()
		v, err3 := binary.ReadUvarint(r)
		if err := errors.Join(err1, err2, err3); err != nil {
			return nil, fmt.Errorf("%w: partition %d: %w", ErrExport, i, err)
		}
		o.kind, o.value = kind, v
		o.key = make([]byte, klen)
		if _, err := io.ReadFull(r, o.key); err != nil {
			return nil, fmt.Errorf("%w: partition %d: %w", ErrExport, i, err)
		}
		flen, err := r.ReadByte()
		if err != nil {
			return nil, fmt.Errorf("%w: partition %d: %w", ErrExport, i, err)
		}
		o.form = make([]byte, flen)
		if _, err := io.ReadFull(r, o.form); err != nil {
			return nil, fmt.Errorf("%w: partition %d: %w", ErrExport, i, err)
		}
		out = append(out, o)
	}
	return out, nil
}

// remove closes and deletes the files.
func (s *spill) remove() {
	for _, f := range s.files {
		_ = f.Close()
		_ = os.Remove(f.Name())
	}
}

// ExportUniverse reads ch from height 0 to cfg.UpTo and writes its
// candidates to w in the element file format. It returns the counts, or
// the chain's, the spill files' or ctx's error.
func ExportUniverse(ctx context.Context, ch element.Chain, cfg ExportConfig, w io.Writer) (ExportStats, error) {
	var st ExportStats
	parts := cfg.Partitions
	if parts == 0 {
		parts = DefaultPartitions
	}
	if parts < 1 || parts > maxPartitions {
		return st, fmt.Errorf("%w: %d partitions, want 1 to %d", ErrExport, parts, maxPartitions)
	}
	tip, err := ch.BestHeight()
	if err != nil {
		return st, fmt.Errorf("best height: %w", err)
	}
	upTo := cfg.UpTo
	if upTo < 0 || upTo > tip {
		upTo = tip
	}
	progress := cfg.Progress
	if progress == nil {
		progress = func(string, int, int) {}
	}
	cands, err := newSpill(cfg.TempDir, "bloomwatch-universe", parts)
	if err != nil {
		return st, err
	}
	defer cands.remove()
	var ops *spill
	if cfg.Outpoints {
		if ops, err = newSpill(cfg.TempDir, "bloomwatch-outpoints", parts); err != nil {
			return st, err
		}
		defer ops.remove()
	}
	var order uint64
	for h := int32(0); h <= upTo; h++ {
		if err := ctx.Err(); err != nil {
			return st, err
		}
		b, err := ch.BlockAt(h)
		if err != nil {
			return st, fmt.Errorf("block %d: %w", h, err)
		}
		if err := observeBlock(b, h, cfg.Outpoints, cands, ops, &order); err != nil {
			return st, err
		}
		st.Blocks++
		progress("blocks", int(h+1), int(upTo+1))
	}
	if ops != nil {
		if err := resolveOutpoints(ops, cands); err != nil {
			return st, err
		}
	}
	bw := bufio.NewWriter(w)
	for i := range parts {
		obs, err := cands.read(i)
		if err != nil {
			return st, err
		}
		st.Observations += uint64(len(obs))
		st.MaxPartition = max(st.MaxPartition, uint64(len(obs)))
		if err := writePartition(bw, obs, &st); err != nil {
			return st, err
		}
		progress("partitions", i+1, parts)
	}
	if err := bw.Flush(); err != nil {
		return st, fmt.Errorf("write: %w", err)
	}
	return st, nil
}

// observeBlock spills block h's observations.
func observeBlock(b *wire.MsgBlock, h int32, outpoints bool, cands, ops *spill, order *uint64) error {
	for _, tx := range b.Transactions {
		for _, in := range tx.TxIn {
			if outpoints {
				if err := ops.put(observation{kind: obsSpent, key: element.OutPointForm(in.PreviousOutPoint)}); err != nil {
					return err
				}
				continue
			}
			if pk := filterpolicy.RevealedPubKey(in); pk != nil {
				if err := cands.put(observation{kind: obsRevealed, key: btcutil.Hash160(pk), form: pk}); err != nil {
					return err
				}
			}
		}
		txid := tx.TxHash()
		for vout, o := range tx.TxOut {
			cs := element.OutputCandidates(o.PkScript)
			if outpoints {
				if len(cs) != 1 || len(cs[0].Forms) != 1 {
					continue
				}
				push := cs[0].Forms[0]
				if err := cands.put(observation{kind: obsPaid, key: push, value: uint64(h)}); err != nil {
					return err
				}
				op := element.OutPointForm(wire.OutPoint{Hash: txid, Index: uint32(vout)})
				if err := ops.put(observation{kind: obsCreated, key: op, form: push, value: *order}); err != nil {
					return err
				}
				*order++
				continue
			}
			for _, c := range cs {
				var form []byte
				if len(c.Forms) > 1 {
					form = c.Forms[1]
				}
				if err := cands.put(observation{kind: obsPaid, key: c.Forms[0], form: form, value: uint64(h)}); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// resolveOutpoints finds, partition by partition, the outputs created and
// never spent, and spills each as a form of the push it pays.
func resolveOutpoints(ops, cands *spill) error {
	for i := range ops.files {
		obs, err := ops.read(i)
		if err != nil {
			return err
		}
		spent := map[string]bool{}
		for _, o := range obs {
			if o.kind == obsSpent {
				spent[string(o.key)] = true
			}
		}
		for _, o := range obs {
			if o.kind == obsCreated && !spent[string(o.key)] {
				if err := cands.put(observation{kind: obsHeld, key: o.form, form: o.key, value: o.value}); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// candidateAcc gathers one candidate's observations.
type candidateAcc struct {
	paid      bool
	firstSeen uint64
	forms     [][]byte
	held      []observation
}

// writePartition groups a partition's observations by candidate and
// writes the candidates paid on chain, sorted by primary form.
func writePartition(w *bufio.Writer, obs []observation, st *ExportStats) error {
	acc := map[string]*candidateAcc{}
	for _, o := range obs {
		a := acc[string(o.key)]
		if a == nil {
			a = &candidateAcc{firstSeen: ^uint64(0)}
			acc[string(o.key)] = a
		}
		switch o.kind {
		case obsPaid:
			a.paid = true
			a.firstSeen = min(a.firstSeen, o.value)
			a.addForm(o.form)
		case obsRevealed:
			a.addForm(o.form)
		case obsHeld:
			a.held = append(a.held, o)
		default:
			return fmt.Errorf("%w: observation kind %q in a candidate partition", ErrExport, o.kind)
		}
	}
	keys := make([]string, 0, len(acc))
	for k, a := range acc {
		if a.paid {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	var batch []element.Candidate
	for _, k := range keys {
		a := acc[k]
		slices.SortFunc(a.held, func(x, y observation) int { return cmp.Compare(x.value, y.value) })
		for _, o := range a.held {
			a.addForm(o.form)
		}
		c := element.Candidate{Forms: append([][]byte{[]byte(k)}, a.forms...), FirstSeen: int32(a.firstSeen)}
		if len(c.Forms) > 1 {
			st.MultiForm++
		}
		batch = append(batch, c)
	}
	st.Candidates += uint64(len(batch))
	if err := element.WriteCandidates(w, batch); err != nil {
		return fmt.Errorf("write: %w", err)
	}
	return nil
}

// addForm adds a further form unless it is empty, known, or over the
// element file's limit.
func (a *candidateAcc) addForm(f []byte) {
	if len(f) == 0 || 1+len(a.forms) >= element.MaxFormsPerLine {
		return
	}
	for _, g := range a.forms {
		if bytes.Equal(f, g) {
			return
		}
	}
	a.forms = append(a.forms, f)
}

// ExportSynthetic writes n synthetic candidates (scan.Synthetic of
// seed, with a public-key form when pubKeys) in the element file format:
// universes of any size for measuring a scan's memory and rate.
func ExportSynthetic(w io.Writer, seed, n uint64, pubKeys bool, progress func(done, total int)) error {
	bw := bufio.NewWriterSize(w, 1<<20)
	u := scan.Synthetic{Seed: seed, Count: n, PubKeys: pubKeys}
	var c element.Candidate
	const batch = 1 << 16
	buf := make([]element.Candidate, 0, batch)
	for i := uint64(0); i < n; i++ {
		u.Fill(i, &c)
		buf = append(buf, c.Clone())
		if len(buf) == batch || i == n-1 {
			if err := element.WriteCandidates(bw, buf); err != nil {
				return err
			}
			buf = buf[:0]
			if progress != nil {
				progress(int(i+1), int(n))
			}
		}
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("write: %w", err)
	}
	return nil
}
