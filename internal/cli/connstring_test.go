package cli

import (
	"encoding/base64"
	"testing"

	"github.com/localtable/localtable/server"
)

// TestDevelopmentStorageConnString: UseDevelopmentStorage=true (from
// AZURE_STORAGE_CONNECTION_STRING, as the SDKs' samples set it) names the
// emulator's account on its default table endpoint, or on the host of
// DevelopmentStorageProxyUri; settings named as well keep their values.
func TestDevelopmentStorageConnString(t *testing.T) {
	c := &command{name: "tables"}
	for cs, want := range map[string]string{
		"UseDevelopmentStorage=true":  "http://127.0.0.1:10002/devstoreaccount1",
		"UseDevelopmentStorage=true;": "http://127.0.0.1:10002/devstoreaccount1",
		"usedevelopmentstorage=TRUE;DevelopmentStorageProxyUri=http://emulator.example":   "http://emulator.example:10002/devstoreaccount1",
		"UseDevelopmentStorage=true;TableEndpoint=http://127.0.0.1:4000/devstoreaccount1": "http://127.0.0.1:4000/devstoreaccount1",
	} {
		vars := map[string]string{"AZURE_STORAGE_CONNECTION_STRING": cs}
		e := &env{getenv: func(k string) string { return vars[k] }}
		var s sourceFlags
		_, r, err := s.resolve(e, c)
		if err != nil {
			t.Errorf("%q: %v", cs, err)
			continue
		}
		if r.endpoint != want || r.account != server.DevAccountName || base64.StdEncoding.EncodeToString(r.key) != server.DevAccountKey {
			t.Errorf("%q: endpoint %s, account %s; want %s, %s and the well-known key", cs, r.endpoint, r.account, want, server.DevAccountName)
		}
	}
}
