package server

import (
	"errors"
	"sync"
)

// byteBudget counts bytes held across requests, up to max.
type byteBudget struct {
	mu        sync.Mutex
	max, used int64
}

// take adds n bytes to a holder's held ones, if the total stays within
// max or the holder holds every byte counted (one page alone may go over,
// or it could never be served).
func (b *byteBudget) take(n, held int64) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.used+n > b.max && b.used != held {
		return false
	}
	b.used += n
	return true
}

// give returns n bytes.
func (b *byteBudget) give(n int64) {
	b.mu.Lock()
	b.used -= n
	b.mu.Unlock()
}

// errPagesBusy ends the building of a page over MaxPageBytesInFlight.
var errPagesBusy = errors.New("server: query pages in flight over MaxPageBytesInFlight")

// pageMemory counts the memory of one page's buffer against the server's
// budget: grow after each append, release once the page is written.
type pageMemory struct {
	b    *byteBudget
	held int64
}

// grow counts buf's capacity; errPagesBusy if the budget refuses it.
func (m *pageMemory) grow(buf []byte) error {
	c := int64(cap(buf))
	if c <= m.held {
		return nil
	}
	if !m.b.take(c-m.held, m.held) {
		return errPagesBusy
	}
	m.held = c
	return nil
}

// release gives back what the page holds.
func (m *pageMemory) release() {
	m.b.give(m.held)
	m.held = 0
}
