//go:build js

package ws

import "github.com/coder/websocket"

func dialOptions() *websocket.DialOptions {
	return &websocket.DialOptions{Subprotocols: []string{Subprotocol}}
}
