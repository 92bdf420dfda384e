package portmap

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strings"
	"time"

	natpmp "github.com/jackpal/go-nat-pmp"
)

// natPMP is a router that speaks NAT-PMP on UDP port 5351 of the gateway.
type natPMP struct {
	client  *natpmp.Client
	gateway netip.Addr
}

// NewNATPMP is the NAT-PMP router at gateway (UDP port 5351); each request
// is retried for at most timeout.
func NewNATPMP(gateway netip.Addr, timeout time.Duration) Router {
	return &natPMP{client: natpmp.NewClientWithTimeout(net.IP(gateway.AsSlice()), timeout), gateway: gateway}
}

func (n *natPMP) Method() string { return "NAT-PMP" }

// call runs f off the caller's goroutine so that ctx can end the wait
// (the library takes no context; its own timeout ends the call itself).
func call[T any](ctx context.Context, f func() (T, error)) (T, error) {
	type result struct {
		v   T
		err error
	}
	ch := make(chan result, 1)
	go func() {
		v, err := f()
		ch <- result{v, err}
	}()
	select {
	case r := <-ch:
		return r.v, r.err
	case <-ctx.Done():
		var zero T
		return zero, ctx.Err()
	}
}

func (n *natPMP) ExternalIP(ctx context.Context) (netip.Addr, error) {
	r, err := call(ctx, n.client.GetExternalAddress)
	if err != nil {
		return netip.Addr{}, fmt.Errorf("NAT-PMP at %v: external address: %w", n.gateway, err)
	}
	return netip.AddrFrom4(r.ExternalIPAddress), nil
}

func (n *natPMP) Add(ctx context.Context, proto Protocol, internal, ext uint16, lease time.Duration) (uint16, time.Duration, error) {
	secs := max(int(lease/time.Second), 1)
	r, err := call(ctx, func() (*natpmp.AddPortMappingResult, error) {
		return n.client.AddPortMapping(strings.ToLower(string(proto)), int(internal), int(ext), secs)
	})
	if err != nil {
		return 0, 0, fmt.Errorf("NAT-PMP at %v: %w", n.gateway, err)
	}
	if r.MappedExternalPort == 0 {
		return 0, 0, fmt.Errorf("NAT-PMP at %v: granted external port 0", n.gateway)
	}
	return r.MappedExternalPort, time.Duration(r.PortMappingLifetimeInSeconds) * time.Second, nil
}

// Delete asks for a lifetime of 0, which removes the mapping (RFC 6886,
// section 3.4).
func (n *natPMP) Delete(ctx context.Context, proto Protocol, internal, _ uint16) error {
	_, err := call(ctx, func() (*natpmp.AddPortMappingResult, error) {
		return n.client.AddPortMapping(strings.ToLower(string(proto)), int(internal), 0, 0)
	})
	if err != nil {
		return fmt.Errorf("NAT-PMP at %v: %w", n.gateway, err)
	}
	return nil
}

// errNoGateway says the machine has no IPv4 default gateway to ask.
var errNoGateway = errors.New("no IPv4 default gateway")
