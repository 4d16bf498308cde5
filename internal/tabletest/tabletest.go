// Package tabletest holds the helpers of the root package's black-box
// tests: those at the root (package localtable_test) and those in package
// tests (../../tests). It is the one copy of each: the engine matrix every
// table-level test runs on, accounts and tables opened on it, a fake
// clock, entities and properties, a test Predicate, and small assertions.
//
// It is internal, for the module's own tests: users cannot depend on it.
// The root's white-box tests (package localtable) cannot import it, as it
// imports localtable, and use none of it.
package tabletest

import "testing"

// Must fails the test at once if err is not nil.
func Must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
