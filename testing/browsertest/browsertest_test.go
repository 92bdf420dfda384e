package browsertest

import (
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestStart starts the browser with the extra Foreground flags and has a
// tab work out a sum, so a launch that leaves the browser unusable, or a
// Poll or Eval that does not reach the tab, fails here.
func TestStart(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a browser")
	}
	bctx := Start(t, "browsertest's own test", Foreground...)
	tctx, cancel := chromedp.NewContext(bctx)
	defer cancel()
	if err := chromedp.Do(tctx, chromedp.Navigate("data:text/html,<p>sum</p>")); err != nil {
		t.Fatalf("open a page: %v", err)
	}
	Poll(t, tctx, "a tab that computes", "6*7 === 42", 30*time.Second)
	if got := Eval[int](t, tctx, "6*7"); got != 42 {
		t.Errorf("6*7 = %d in the browser, want 42", got)
	}
}
