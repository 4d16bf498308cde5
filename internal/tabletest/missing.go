package tabletest

import (
	"os"
	"testing"
)

// Missing handles a test whose outside dependency (a browser, an SDK, an
// interpreter) is not there: under CI=true it fails the test, as CI
// installs them all (scripts/test-deps.sh) and must not pass with a part
// untested; elsewhere it skips the test loudly, with msg saying what did
// not run and how to install what is missing.
func Missing(t testing.TB, msg string) {
	t.Helper()
	if os.Getenv("CI") == "true" {
		t.Fatal(msg + "; CI=true requires it")
	}
	t.Skip("SKIPPED: " + msg)
}
