package browsertest

import (
	"context"
	"os"
	"os/exec"
	"testing"

	"github.com/chromedp/chromedp"
)

// Chromium returns the path of the Chromium binary. Without one it skips
// the test, or fails it when CI=true; what names the test in the message
// (such as "the status page's browser test").
func Chromium(t testing.TB, what string) string {
	t.Helper()
	if _, err := os.Stat("/usr/bin/chromium"); err == nil {
		return "/usr/bin/chromium"
	}
	if p, err := exec.LookPath("chromium"); err == nil {
		return p
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("CI must install chromium (Debian: apt-get install -y chromium) for " + what)
	}
	t.Skip("no chromium: install it (Debian: apt-get install -y chromium) to run " + what)
	return ""
}

// Start launches a headless Chromium with a fresh profile, stopped when
// the test ends, and returns the browser's context; each tab is a
// chromedp.NewContext of it. what is as for Chromium; extra options are
// added after the common ones.
func Start(t testing.TB, what string, extra ...chromedp.ExecAllocatorOption) context.Context {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(Chromium(t, what)),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		// The machine may be offline: nothing may try to reach the
		// browser vendor's servers.
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-default-apps", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1280, 900),
	)
	opts = append(opts, extra...)
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	bctx, cancelBrowser := chromedp.NewContext(actx)
	t.Cleanup(func() {
		cancelBrowser()
		cancelAlloc()
	})
	// The first run starts the browser, under no deadline (a deadline on
	// it would end the browser with it).
	if err := chromedp.Do(bctx); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	return bctx
}
