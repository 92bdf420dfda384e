//go:build tools

// Package tooldeps pins modules that code in progress imports.
package tooldeps

import (
	_ "github.com/chromedp/chromedp"
	_ "github.com/pelletier/go-toml/v2"
	_ "github.com/prometheus/client_golang/prometheus"
	_ "github.com/prometheus/client_golang/prometheus/promhttp"
	_ "github.com/prometheus/common/expfmt"
)
