package headers

import (
	"bufio"
	"fmt"
	"io"
)

// verifyView is a chainView over a store with its own 20-minute-rule memo,
// so that Verify (under the read lock) never writes the store's.
type verifyView struct {
	s    *Store
	memo walkMemo
}

func (v *verifyView) node(i int32) *node                   { return v.s.nodes.at(i) }
func (v *verifyView) ancestor(i int32, height int32) int32 { return v.s.ancestor(i, height) }
func (v *verifyView) walkMemo() *walkMemo                  { return &v.memo }

// Verify re-validates every stored header, side branches included, in the
// context of its parent: difficulty bits, median time past, BIP94, version
// floors and checkpoint hashes (Open only re-checks links, checksums and
// proof of work). The two-hour future rule is not re-applied: it depends on
// the clock at the time a header arrived. A failure is a *CorruptError
// that also matches the validation sentinel (ErrBadBits, ...). It reads the
// whole file: about a second for a mainnet-sized chain.
func (s *Store) Verify() error {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return ErrClosed
	}
	v := &verifyView{s: s}
	br := bufio.NewReaderSize(io.NewSectionReader(s.f, recordOffset(1), s.size-recordOffset(1)), 1<<20)
	rec := make([]byte, recordLen)
	for i := int32(1); i < int32(s.nodes.len()); i++ {
		off := recordOffset(i)
		if _, err := io.ReadFull(br, rec); err != nil {
			return fmt.Errorf("headers: read %s at %d: %w", s.path, off, err)
		}
		if !recordOK(rec) {
			return &CorruptError{Path: s.path, Offset: off,
				Reason: fmt.Sprintf("record %d changed on disk (checksum)", i)}
		}
		h := decodeHeader(rec[:headerLen])
		n := s.nodes.at(i)
		if h.PrevBlock != s.nodes.at(n.parent).hash {
			return &CorruptError{Path: s.path, Offset: off,
				Reason: fmt.Sprintf("record %d changed on disk (parent)", i)}
		}
		detail, err := s.rules.checkContext(v, &h, &n.hash, n.parent, -1)
		if err != nil {
			return &CorruptError{Path: s.path, Offset: off,
				Reason: fmt.Sprintf("header %v at height %d fails validation: %s", n.hash, n.height, detail),
				Err:    err}
		}
	}
	return nil
}
