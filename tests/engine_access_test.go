package tests

import (
	"reflect"
	"testing"

	"github.com/localtable/localtable"
	"github.com/localtable/localtable/storage"
)

// TestEngineNotExposed: an Account owns its engine, and the public API
// hands it out nowhere (no method of *Account returns a storage.Engine):
// the module's tools open the engine themselves and keep it.
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
}
