//go:build !js

package coord

import "github.com/coder/websocket"

// wsOptions are the WebSocket dial's options: the coordinator's HTTP
// client (its pin), no compression.
func (c *Coordinator) wsOptions() *websocket.DialOptions {
	return &websocket.DialOptions{HTTPClient: c.client, CompressionMode: websocket.CompressionDisabled}
}
