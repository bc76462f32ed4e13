package scan

import (
	"context"
	"errors"
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
			if err != nil {
				t.Fatal(err)
			}
			for i := range hits {
				if hits[i].Load() != 1 {
					t.Fatalf("index %d visited %d times", i, hits[i].Load())
				}
			}
			n := 0
			for i := range used {
				if used[i].Load() {
					n++
				}
			}
			if n > tc.wantMaxWorkers {
				t.Errorf("%d workers ran, at most %d expected", n, tc.wantMaxWorkers)
			}
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
	if !errors.Is(err, boom) {
		t.Fatalf("err = %v, want boom", err)
	}
	if calls.Load() > 20 {
		t.Errorf("%d chunks ran after the error", calls.Load())
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err = forkJoin(ctx, 2, 1000, 1, func(int, uint64, uint64) error {
		t.Error("ran after cancel")
		return nil
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
}
