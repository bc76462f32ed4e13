package wallet

import (
	"fmt"
	"time"

	"github.com/btcsuite/btcwallet/walletdb"
)

// batch is an open database transaction that collects the writes of
// several calls. Committing it makes all of them durable at once; a crash
// before the commit loses all of them, never part of one.
type batch struct {
	tx     walletdb.ReadWriteTx
	blocks int
	opened time.Time
}

// update runs f inside the open batch, opening one if needed. If f fails,
// the whole batch is rolled back and the in-memory state reloaded from the
// last commit, so memory never runs ahead of what can still be committed.
// The caller holds w.mu.
func (w *Wallet) update(f func(b buckets) error) error {
	if w.batch == nil {
		tx, err := w.db.BeginReadWriteTx()
		if err != nil {
			return fmt.Errorf("begin write: %w", err)
		}
		w.batch = &batch{tx: tx, opened: w.now()}
	}
	b, err := writeBuckets(w.batch.tx)
	if err == nil {
		err = f(b)
	}
	if err != nil {
		w.abort()
		return err
	}
	return nil
}

// updateNow commits any open batch, runs f in a transaction of its own
// and commits it: an error in f then discards only f's writes, never
// blocks applied earlier. The caller holds w.mu.
func (w *Wallet) updateNow(f func(b buckets) error) error {
	if err := w.commitLocked(); err != nil {
		return err
	}
	if err := w.update(f); err != nil {
		return err
	}
	return w.commitLocked()
}

// abort rolls the open batch back and reloads the committed state.
func (w *Wallet) abort() {
	if w.batch == nil {
		return
	}
	_ = w.batch.tx.Rollback()
	w.batch = nil
	if err := w.load(); err != nil {
		w.broken = fmt.Errorf("wallet state lost after a failed write (reopen the wallet): %w", err)
	}
}

// commitLocked commits the open batch, if any. On failure the batch is
// gone and the committed state reloaded. The caller holds w.mu.
func (w *Wallet) commitLocked() error {
	if w.batch == nil {
		return nil
	}
	err := w.batch.tx.Commit()
	w.batch = nil
	if err != nil {
		if lerr := w.load(); lerr != nil {
			w.broken = fmt.Errorf("wallet state lost after a failed commit (reopen the wallet): %w", lerr)
		}
		return fmt.Errorf("commit: %w", err)
	}
	return nil
}

// batchDue reports whether the open batch has reached its size or age.
func (w *Wallet) batchDue() bool {
	if w.batch == nil {
		return false
	}
	if w.batch.blocks >= w.opts.batchBlocks {
		return true
	}
	return w.opts.batchInterval > 0 && w.now().Sub(w.batch.opened) >= w.opts.batchInterval
}

// view runs f on the applied state: inside the open batch when there is
// one, otherwise in a read transaction. The caller holds w.mu.
func (w *Wallet) view(f func(b readBuckets) error) error {
	run := func(tx walletdb.ReadTx) error {
		b, err := readBucketsOf(tx)
		if err != nil {
			return err
		}
		return f(b)
	}
	if w.batch != nil {
		return run(w.batch.tx)
	}
	return walletdb.View(w.db, run)
}

// Flush commits every applied block. The node calls it when it reaches
// the peers' tip and when it stops.
func (w *Wallet) Flush() error {
	unlock, err := w.enter()
	if err != nil {
		return err
	}
	defer unlock()
	return w.commitLocked()
}
