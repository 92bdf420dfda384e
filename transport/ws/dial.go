package ws

import (
	"context"
	"fmt"
	"net"

	"github.com/coder/websocket"
)

// Dial connects to the host at url (ws://HOST:PORT/ws or wss://…) and
// returns the connection as the protocol's byte stream: it has the
// signature of join.Config.Dial, whose address is then the URL. Messages
// from the host are bounded by DefaultReadLimit. ctx bounds the connect
// only; the connection lives until Close.
func Dial(ctx context.Context, url string) (net.Conn, error) {
	c, _, err := websocket.Dial(ctx, url, dialOptions())
	if err != nil {
		return nil, fmt.Errorf("websocket: %w", err)
	}
	if sp := c.Subprotocol(); sp != "" && sp != Subprotocol {
		c.Close(websocket.StatusProtocolError, "unknown subprotocol")
		return nil, fmt.Errorf("websocket: the host chose subprotocol %q, not %q", sp, Subprotocol)
	}
	nc := websocket.NetConn(context.Background(), c, websocket.MessageBinary)
	c.SetReadLimit(DefaultReadLimit) // after NetConn, which lifts the limit
	return nc, nil
}
