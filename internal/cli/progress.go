package cli

import (
	"fmt"
	"io"
	"os"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"
)

// The progress bar is github.com/schollz/progressbar/v3: maintained,
// small (its own dependencies are a terminal-width and a colour package),
// it computes the rate and the ETA, throttles its redraws, and is an
// io.Writer, so an input file is teed into it. It is drawn only on a
// terminal: in a pipe, a log or a test, nothing is written.

// progressMode is --progress: auto (on a terminal), always or never.
func wantProgress(mode string, w io.Writer) (bool, error) {
	switch mode {
	case "never":
		return false, nil
	case "always":
		return true, nil
	case "auto":
		f, ok := w.(*os.File)
		return ok && term.IsTerminal(int(f.Fd())), nil
	}
	return false, fmt.Errorf("--progress %q: want auto, always or never", mode)
}

// newByteBar is a bar over size bytes of input (ETA by bytes done),
// described by the rows written.
func newByteBar(w io.Writer, size int64, what string) *progressbar.ProgressBar {
	return progressbar.NewOptions64(size,
		progressbar.OptionSetWriter(w),
		progressbar.OptionSetDescription(what),
		progressbar.OptionShowBytes(true),
		progressbar.OptionSetWidth(30),
		progressbar.OptionThrottle(progressThrottle),
		progressbar.OptionSetPredictTime(true),
		progressbar.OptionClearOnFinish(),
		progressbar.OptionSetRenderBlankState(true),
		// No goroutine turning the spinner of a bar without a total:
		// it would outlive a bar that ends without Finish (Exit), and
		// draw over the next one. The spinner turns as the bar is drawn.
		progressbar.OptionSetSpinnerChangeInterval(0),
	)
}

// progressThrottle is the least time between two redraws of a bar
// (tests set it to 0, to see every state).
var progressThrottle = 150 * time.Millisecond

// newRowBar is a bar over rows (total -1 when unknown: a spinner with
// the count), drawn at once.
func newRowBar(w io.Writer, total int64, what string) *progressbar.ProgressBar {
	return progressbar.NewOptions64(total,
		progressbar.OptionSetWriter(w),
		progressbar.OptionSetDescription(what),
		progressbar.OptionShowCount(),
		progressbar.OptionShowIts(),
		progressbar.OptionSetItsString("rows"),
		progressbar.OptionSetWidth(30),
		progressbar.OptionThrottle(progressThrottle),
		progressbar.OptionSetPredictTime(true),
		progressbar.OptionClearOnFinish(),
		progressbar.OptionSetRenderBlankState(true),
		// No goroutine turning the spinner of a bar without a total:
		// it would outlive a bar that ends without Finish (Exit), and
		// draw over the next one. The spinner turns as the bar is drawn.
		progressbar.OptionSetSpinnerChangeInterval(0),
	)
}
