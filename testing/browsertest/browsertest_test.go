package browsertest

import (
	"testing"

	"github.com/chromedp/chromedp"
)

// TestStart starts the browser with an extra flag and has a tab work out
// a sum, so a launch that leaves the browser unusable fails here.
func TestStart(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a browser")
	}
	bctx := Start(t, "browsertest's own test", Foreground...)
	tctx, cancel := chromedp.NewContext(bctx)
	defer cancel()
	got, err := chromedp.Run(tctx, chromedp.Evaluate[int]("6*7"))
	if err != nil {
		t.Fatalf("evaluate in a tab: %v", err)
	}
	if got != 42 {
		t.Errorf("6*7 = %d in the browser, want 42", got)
	}
}
