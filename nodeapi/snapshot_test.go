package nodeapi

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestBalanceSnapshot checks the snapshot's reads: one at a time, a
// refresh during a read makes exactly one more read, and get returns the
// latest read's result.
func TestBalanceSnapshot(t *testing.T) {
	gate := make(chan struct{})
	started := make(chan int, 10)
	n := 0
	b := &balanceSnapshot{read: func(context.Context) (*BalanceInfo, error) {
		n++
		started <- n
		<-gate
		return &BalanceInfo{State: State{SyncedHeight: int32(n)}}, nil
	}}
	require.Nil(t, b.get())
	b.refresh()
	require.Equal(t, 1, <-started)
	b.refresh() // during the first read: one more read after it
	b.refresh()
	gate <- struct{}{}
	require.Equal(t, 2, <-started)
	gate <- struct{}{}
	for {
		b.mu.Lock()
		running := b.running
		b.mu.Unlock()
		if !running {
			break
		}
	}
	require.Equal(t, int32(2), b.get().SyncedHeight)
	require.Empty(t, started, "a third read")
}
