package cli

import (
	"bufio"
	"context"
	"io"
	"strings"
	"testing"
)

// TestServeBannerNamesExtensions checks that serve's banner says what it
// serves beyond the service: the change feed, where and how much of it,
// the indexes declared by --index and the expiry policies of --expiry.
func TestServeBannerNamesExtensions(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"serve", "--addr", "127.0.0.1:0", "--log-level", "error", "--feed", "--feed-keep", "500", "--index", "Orders:Status,Total", "--expiry", "Sessions:ExpiresAt", "--expiry-interval", "5s"}, pw, io.Discard)
		pw.Close()
	}()
	var banner strings.Builder
	sc := bufio.NewScanner(pr)
	for sc.Scan() {
		banner.WriteString(sc.Text() + "\n")
		if strings.HasPrefix(sc.Text(), "localtable: ready (") {
			break
		}
	}
	go io.Copy(io.Discard, pr)
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"/ACCOUNT/$changes, keeping the latest 500 changes", "  index:     Orders on Status, Total\n", "  expiry:    Sessions on ExpiresAt (Edm.DateTime values only; swept every 5s)\n"} {
		if !strings.Contains(banner.String(), want) {
			t.Errorf("the banner does not say %q:\n%s", want, banner.String())
		}
	}
}
