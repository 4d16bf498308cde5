package cli

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"testing"

	"github.com/localtable/localtable/server"
)

func testKey(t *testing.T) []byte {
	t.Helper()
	k, err := base64.StdEncoding.DecodeString(server.DevAccountKey)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func sign(key []byte, s string) string {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(s))
	return base64.StdEncoding.EncodeToString(m.Sum(nil))
}
