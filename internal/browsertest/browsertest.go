// Package browsertest starts headless Chromium (Debian's chromium) for
// tests that must see what a real browser does: the CORS test of package
// server and the explorer's click-through.
//
// Without chromium a test skips, loudly, unless the environment says
// CI=true, where it fails: CI installs chromium (scripts/test-deps.sh).
package browsertest

import (
	"context"
	"os"
	"os/exec"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/localtable/localtable/internal/tabletest"
)

// Browser is a running headless Chromium, closed with the test.
type Browser struct {
	// Ctx is the chromedp context of the browser's tab: pass it (or a
	// context derived from it) to chromedp.Run.
	Ctx context.Context

	mu         sync.Mutex
	exceptions []string
}

// Start starts headless Chromium for t, or skips t (fails it under
// CI=true) when chromium is not installed; what names the test in that
// message. Extra options (a window size, say) follow the defaults: no
// sandbox or GPU, a fresh profile, and no background networking, which
// this machine's closed network refuses.
func Start(t testing.TB, what string, opts ...chromedp.ExecAllocatorOption) *Browser {
	t.Helper()
	chrome := ""
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			chrome = p
			break
		}
	}
	if chrome == "" {
		msg := "chromium not found in PATH: " + what + " DID NOT RUN (install the Debian package chromium)"
		tabletest.Missing(t, msg)
	}
	// Not t.TempDir: chromium's helper processes may still write to the
	// profile for a moment after the browser exits, which fails
	// t.TempDir's cleanup. Remove it with retries instead (registered
	// first, so it runs after the browser is closed).
	profile, err := os.MkdirTemp("", "localtable-chromium-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for i := 0; ; i++ {
			err := os.RemoveAll(profile)
			if err == nil {
				return
			}
			if i == 50 {
				t.Logf("leaving chromium's profile %s: %v", profile, err)
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
	})
	all := append([]chromedp.ExecAllocatorOption{
		chromedp.ExecPath(chrome),
		chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun, chromedp.NoDefaultBrowserCheck,
		chromedp.UserDataDir(profile),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
	}, opts...)
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), all...)
	t.Cleanup(cancelAlloc)
	ctx, cancelBrowser := chromedp.NewContext(allocCtx)
	t.Cleanup(cancelBrowser)
	if err := chromedp.Run(ctx); err != nil { // start the browser, for the life of ctx
		t.Fatalf("starting chromium: %v", err)
	}
	b := &Browser{Ctx: ctx}
	chromedp.ListenTarget(ctx, func(ev any) {
		if e, ok := ev.(*runtime.EventExceptionThrown); ok {
			b.mu.Lock()
			b.exceptions = append(b.exceptions, e.ExceptionDetails.Error())
			b.mu.Unlock()
		}
	})
	return b
}

// Exceptions returns the JavaScript exceptions the pages threw so far,
// for failure messages.
func (b *Browser) Exceptions() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string(nil), b.exceptions...)
}
