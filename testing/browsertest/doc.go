// Package browsertest starts the headless Chromium that the browser tests
// of the status page and of the browser player drive through chromedp:
// it finds the browser (skipping the test without one, failing it on CI),
// and launches it with a fresh profile and the flags that keep an offline
// machine from reaching out, so both tests start it the same way.
package browsertest
