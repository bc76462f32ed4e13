package scan

import (
	"context"
	"errors"
	"github.com/stretchr/testify/require"
	"sync/atomic"
	"testing"
)

func TestForkJoinCoversEveryIndexOnce(t *testing.T) {
	tests := []struct {
		name           string
		workers        int
		n, chunk       uint64
		wantMaxWorkers int
	}{
		{"one worker", 1, 1000, 7, 1},
		{"more workers than chunks", 8, 10, 5, 2},
		{"uneven last chunk", 3, 1001, 100, 3},
		{"empty", 4, 0, 10, 0},
		{"default chunk", 2, 3 * defaultChunk / 2, 0, 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			hits := make([]atomic.Int32, tc.n)
			var used [64]atomic.Bool
			err := forkJoin(context.Background(), tc.workers, tc.n, tc.chunk, func(w int, lo, hi uint64) error {
				used[w].Store(true)
				for i := lo; i < hi; i++ {
					hits[i].Add(1)
				}
				return nil
			})
			require.NoError(t, err)
			for i := range hits {
				if hits[i].Load() != 1 {
					require.Equal(t, int32(1), hits[i].Load(), "index %d visited %d times", i, hits[i].Load())
				}
			}
			n := 0
			for i := range used {
				if used[i].Load() {
					n++
				}
			}
			require.LessOrEqual(t, n, tc.wantMaxWorkers, "%d workers ran, at most %d expected", n, tc.wantMaxWorkers)
		})
	}
}

func TestForkJoinStopsOnErrorAndCancel(t *testing.T) {
	boom := errors.New("boom")
	var calls atomic.Int32
	err := forkJoin(context.Background(), 2, 1000, 1, func(_ int, lo, _ uint64) error {
		calls.Add(1)
		if lo == 3 {
			return boom
		}
		return nil
	})
	require.ErrorIs(t, err, boom, "err = %v, want boom", err)
	require.LessOrEqual(t, calls.Load(), int32(20), "%d chunks ran after the error", calls.Load())
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	// The chunks run on forkJoin's goroutines: one that runs is
	// recorded, and required on the test's goroutine.
	var ran atomic.Bool
	err = forkJoin(ctx, 2, 1000, 1, func(int, uint64, uint64) error {
		ran.Store(true)
		return nil
	})
	require.ErrorIs(t, err, context.Canceled, "err = %v, want context.Canceled", err)
	require.False(t, ran.Load(), "ran after cancel")
}
