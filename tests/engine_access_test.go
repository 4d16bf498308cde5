package tests

import (
	"reflect"
	"testing"

	"github.com/localtable/localtable"
	"github.com/localtable/localtable/internal/acctengine"
	"github.com/localtable/localtable/storage"
	"github.com/localtable/localtable/storage/memory"
)

// TestEngineNotExposed: an Account owns its engine, and the public API
// hands it out nowhere (no method of *Account returns a storage.Engine);
// the module's tools reach it through internal/acctengine.
func TestEngineNotExposed(t *testing.T) {
	engineType := reflect.TypeFor[storage.Engine]()
	at := reflect.TypeFor[*localtable.Account]()
	for i := range at.NumMethod() {
		m := at.Method(i)
		for j := range m.Type.NumOut() {
			if out := m.Type.Out(j); out == engineType || (out.Kind() == reflect.Interface && out.Implements(engineType)) {
				t.Errorf("(*Account).%s returns the engine (%s)", m.Name, out)
			}
		}
	}
	eng := memory.New(nil)
	a, err := localtable.Open(&localtable.Options{Engine: eng})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	if got := acctengine.Of(a); got != eng {
		t.Errorf("acctengine.Of = %v, want the engine the account was opened over", got)
	}
}
