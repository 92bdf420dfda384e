package browsertest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// ErrNoChromium is Find's error when the machine has no Chromium.
var ErrNoChromium = errors.New("no chromium (Debian: apt-get install -y chromium)")

// Foreground are the options that keep a tab in the background from being
// slowed, for a page that plays in lockstep.
var Foreground = []chromedp.ExecAllocatorOption{
	chromedp.Flag("disable-background-timer-throttling", true),
	chromedp.Flag("disable-renderer-backgrounding", true),
}

// Find returns the path of the Chromium binary: /usr/bin/chromium, or
// chromium on the PATH.
func Find() (string, error) {
	if _, err := os.Stat("/usr/bin/chromium"); err == nil {
		return "/usr/bin/chromium", nil
	}
	if p, err := exec.LookPath("chromium"); err == nil {
		return p, nil
	}
	return "", ErrNoChromium
}

// Chromium returns the path of the Chromium binary. Without one it skips
// the test, or fails it when CI=true; what names the test in the message
// (such as "the status page's browser test").
func Chromium(t testing.TB, what string) string {
	t.Helper()
	p, err := Find()
	if err == nil {
		return p
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("CI must install chromium (Debian: apt-get install -y chromium) for " + what)
	}
	t.Skip("no chromium: install it (Debian: apt-get install -y chromium) to run " + what)
	return ""
}

// Launch starts the headless Chromium at execPath with its profile in
// profileDir and returns the browser's context, each tab being a
// chromedp.NewContext of it, and the function that stops it. extra
// options are added after the common ones, which keep an offline machine
// from trying to reach the browser vendor's servers.
func Launch(execPath, profileDir string, extra ...chromedp.ExecAllocatorOption) (context.Context, context.CancelFunc, error) {
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(execPath),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-default-apps", true),
		chromedp.UserDataDir(profileDir),
		chromedp.WindowSize(1280, 900),
	)
	opts = append(opts, extra...)
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	bctx, cancelBrowser := chromedp.NewContext(actx)
	stop := func() {
		cancelBrowser()
		cancelAlloc()
	}
	// The first run starts the browser, under no deadline (a deadline on
	// it would end the browser with it).
	if err := chromedp.Do(bctx); err != nil {
		stop()
		return nil, nil, fmt.Errorf("start chromium: %w", err)
	}
	return bctx, stop, nil
}

// Start launches Chromium for the test with a fresh profile, stopped when
// the test ends, and returns the browser's context. what is as for
// Chromium; extra is as for Launch.
func Start(t testing.TB, what string, extra ...chromedp.ExecAllocatorOption) context.Context {
	t.Helper()
	bctx, stop, err := Launch(Chromium(t, what), t.TempDir(), extra...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	return bctx
}

// Poll waits up to timeout for the JavaScript expression to be truthy in
// ctx's tab, checking every 100 ms; what names the wait if it fails the
// test.
func Poll(t testing.TB, ctx context.Context, what, expr string, timeout time.Duration) {
	t.Helper()
	if err := chromedp.Do(ctx, chromedp.Poll[chromedp.Void](expr,
		chromedp.WithPollingTimeout(timeout), chromedp.WithPollingInterval(100*time.Millisecond))); err != nil {
		t.Fatalf("waiting for %s: %v", what, err)
	}
}

// Eval is the value of the JavaScript expression in ctx's tab; an error
// fails the test.
func Eval[T any](t testing.TB, ctx context.Context, expr string) T {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		t.Fatalf("evaluate %s: %v", expr, err)
	}
	return v
}
