package server

import "testing"

// A page alone may go over the budget (else it could never be served);
// with others in flight it may not.
func TestByteBudget(t *testing.T) {
	b := byteBudget{max: 10}
	a := pageMemory{b: &b}
	if err := a.grow(make([]byte, 0, 25)); err != nil || b.used != 25 {
		t.Fatalf("a page alone over the budget: %v, used %d", err, b.used)
	}
	o := pageMemory{b: &b}
	if err := o.grow(make([]byte, 0, 1)); err != errPagesBusy {
		t.Fatalf("a second page over the budget: %v", err)
	}
	if err := a.grow(make([]byte, 0, 30)); err != nil || b.used != 30 {
		t.Fatalf("the page alone growing: %v, used %d", err, b.used)
	}
	a.release()
	if err := o.grow(make([]byte, 0, 8)); err != nil || b.used != 8 {
		t.Fatalf("within the budget: %v, used %d", err, b.used)
	}
	if err := a.grow(make([]byte, 0, 3)); err != errPagesBusy {
		t.Fatalf("over the budget: %v", err)
	}
	o.release()
	if b.used != 0 {
		t.Fatalf("all released: used %d", b.used)
	}
}
