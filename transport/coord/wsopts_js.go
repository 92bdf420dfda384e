//go:build js

package coord

import "github.com/coder/websocket"

// wsOptions are the WebSocket dial's options in a browser (the browser
// page's player), which dials with its own WebSocket: none apply, and
// the browser checks the coordinator's certificate itself.
func (c *Coordinator) wsOptions() *websocket.DialOptions {
	return nil
}
