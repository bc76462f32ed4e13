package nodeapi

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// fakeClock is a settable clock for the snapshot's interest window.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// idle waits until no refresh runs.
func idle(b *balanceSnapshot) {
	for {
		b.mu.Lock()
		running := b.running
		b.mu.Unlock()
		if !running {
			return
		}
		time.Sleep(time.Millisecond)
	}
}

// TestBalanceSnapshot checks the snapshot's reads: none while no client
// asks; a request then reads the wallet and starts the refreshing; one
// refresh at a time, a refresh during a read makes exactly one more read;
// requests answer from the latest read; and the refreshing stops once no
// client asked for balanceInterest.
func TestBalanceSnapshot(t *testing.T) {
	clock := &fakeClock{t: time.Unix(1_700_000_000, 0)}
	gate := make(chan struct{})
	started := make(chan int, 10)
	n := 0
	b := newBalanceSnapshot(func(context.Context) (*BalanceInfo, error) {
		n++
		started <- n
		<-gate
		return &BalanceInfo{State: State{SyncedHeight: int32(n)}}, nil
	})
	b.now = clock.now

	// Events with nobody asking: no read.
	b.refresh()
	b.refresh()
	require.Empty(t, started, "a read nobody asked for")

	// The first request reads the wallet itself.
	type result struct {
		info *BalanceInfo
		err  error
	}
	got := make(chan result, 1)
	go func() {
		info, err := b.answer(context.Background())
		got <- result{info, err}
	}()
	require.Equal(t, 1, <-started)
	gate <- struct{}{}
	first := <-got
	require.NoError(t, first.err)
	require.Equal(t, int32(1), first.info.SyncedHeight)

	// Now events refresh it, one read at a time.
	b.refresh()
	require.Equal(t, 2, <-started)
	b.refresh() // during the read: one more read after it
	b.refresh()
	gate <- struct{}{}
	require.Equal(t, 3, <-started)
	gate <- struct{}{}
	idle(b)
	require.Empty(t, started, "a fourth read")
	info, err := b.answer(context.Background())
	require.NoError(t, err)
	require.Equal(t, int32(3), info.SyncedHeight, "answered from the snapshot")
	require.Empty(t, started, "the answer read the wallet")

	// No request for balanceInterest: events read nothing again.
	clock.add(balanceInterest)
	b.refresh()
	require.Empty(t, started, "a read after the interest lapsed")
}
