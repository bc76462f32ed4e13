package tui

// ring is a fixed-capacity FIFO that drops its oldest item when full.
type ring[T any] struct {
	buf  []T
	head int // index of the oldest item
	n    int
}

// newRing returns an empty ring holding at most capacity items.
func newRing[T any](capacity int) *ring[T] {
	return &ring[T]{buf: make([]T, 0, capacity)}
}

// push appends v and returns the item it evicted, if any.
func (r *ring[T]) push(v T) (evicted T, ok bool) {
	c := cap(r.buf)
	if c == 0 {
		return v, true
	}
	if len(r.buf) < c {
		r.buf = append(r.buf, v)
		r.n++
		return evicted, false
	}
	evicted = r.buf[r.head]
	r.buf[r.head] = v
	r.head = (r.head + 1) % c
	return evicted, true
}

// len returns the number of items held.
func (r *ring[T]) len() int { return r.n }

// at returns the i-th oldest item (0 is the oldest).
func (r *ring[T]) at(i int) T {
	return r.buf[(r.head+i)%len(r.buf)]
}

// last returns the i-th newest item (0 is the newest).
func (r *ring[T]) last(i int) T {
	return r.at(r.n - 1 - i)
}

// reset empties the ring.
func (r *ring[T]) reset() {
	clear(r.buf)
	r.buf, r.head, r.n = r.buf[:0], 0, 0
}

// setLast replaces the newest item; the ring must not be empty.
func (r *ring[T]) setLast(v T) {
	r.buf[(r.head+r.n-1)%len(r.buf)] = v
}
