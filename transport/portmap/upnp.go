package portmap

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strings"
	"time"

	"github.com/huin/goupnp"
	"github.com/huin/goupnp/dcps/internetgateway2"
	"github.com/huin/goupnp/soap"
)

// igdService is what this package uses of a UPnP-IGD connection service:
// WANIPConnection:2, WANIPConnection:1 and WANPPPConnection:1 all have it.
type igdService interface {
	AddPortMappingCtx(ctx context.Context, remoteHost string, extPort uint16, proto string, intPort uint16,
		intClient string, enabled bool, desc string, lease uint32) error
	DeletePortMappingCtx(ctx context.Context, remoteHost string, extPort uint16, proto string) error
	GetExternalIPAddressCtx(ctx context.Context) (string, error)
	GetServiceClient() *goupnp.ServiceClient
}

// upnp is a router that speaks UPnP-IGD.
type upnp struct {
	svc    igdService
	method string
	// client is this machine's address on the router's LAN: where the
	// router forwards to.
	client netip.Addr
}

// Description is the name the mappings carry in the router's list.
const Description = "lockhost"

// The device types an SSDP search asks for, newest first.
const (
	igdV2 = "urn:schemas-upnp-org:device:InternetGatewayDevice:2"
	igdV1 = "urn:schemas-upnp-org:device:InternetGatewayDevice:1"
)

// NewUPnPByURL is the UPnP-IGD router whose root device description is at
// root (what SSDP's LOCATION names), without an SSDP search.
func NewUPnPByURL(ctx context.Context, root *url.URL) (Router, error) {
	dev, err := goupnp.DeviceByURLCtx(ctx, root)
	if err != nil {
		return nil, fmt.Errorf("UPnP-IGD at %v: %w", root, err)
	}
	return fromRoot(dev, root, nil)
}

// fromRoot picks the newest connection service of an IGD root device.
// local is the address the device was found from, if known.
func fromRoot(dev *goupnp.RootDevice, loc *url.URL, local net.IP) (Router, error) {
	var svc igdService
	method := ""
	if cs, err := internetgateway2.NewWANIPConnection2ClientsFromRootDevice(dev, loc); err == nil && len(cs) > 0 {
		svc, method = cs[0], "UPnP-IGD v2"
	} else if cs, err := internetgateway2.NewWANIPConnection1ClientsFromRootDevice(dev, loc); err == nil && len(cs) > 0 {
		svc, method = cs[0], "UPnP-IGD v1"
	} else if cs, err := internetgateway2.NewWANPPPConnection1ClientsFromRootDevice(dev, loc); err == nil && len(cs) > 0 {
		svc, method = cs[0], "UPnP-IGD v1 (PPP)"
	} else {
		return nil, fmt.Errorf("UPnP-IGD at %v: no WAN connection service", loc)
	}
	client, err := localAddrFor(local, loc)
	if err != nil {
		return nil, fmt.Errorf("UPnP-IGD at %v: %w", loc, err)
	}
	return &upnp{svc: svc, method: method, client: client}, nil
}

// localAddrFor is this machine's address toward the device at loc: local
// when the search found it, else the source address of a route to it
// (a UDP "connection" sends nothing).
func localAddrFor(local net.IP, loc *url.URL) (netip.Addr, error) {
	if a, ok := netip.AddrFromSlice(local); ok && a.IsValid() && !a.IsUnspecified() {
		return a.Unmap(), nil
	}
	port := loc.Port()
	if port == "" {
		port = "80"
	}
	c, err := net.Dial("udp", net.JoinHostPort(loc.Hostname(), port))
	if err != nil {
		return netip.Addr{}, fmt.Errorf("no route to the device: %w", err)
	}
	defer c.Close()
	return c.LocalAddr().(*net.UDPAddr).AddrPort().Addr().Unmap(), nil
}

func (u *upnp) Method() string { return u.method }

func (u *upnp) ExternalIP(ctx context.Context) (netip.Addr, error) {
	s, err := u.svc.GetExternalIPAddressCtx(ctx)
	if err != nil {
		return netip.Addr{}, fmt.Errorf("%s: external address: %w", u.method, err)
	}
	a, err := netip.ParseAddr(strings.TrimSpace(s))
	if err != nil {
		return netip.Addr{}, fmt.Errorf("%s: external address %q: %w", u.method, s, err)
	}
	return a, nil
}

// upnpPermanentOnly is the UPnP error of a router that takes only leases
// without end (OnlyPermanentLeasesSupported).
const upnpPermanentOnly = 725

// upnpCode is the UPnP error code of err, or 0.
func upnpCode(err error) int {
	var f *soap.SOAPFaultError
	if errors.As(err, &f) {
		return f.Detail.UPnPError.Errorcode
	}
	return 0
}

func (u *upnp) Add(ctx context.Context, proto Protocol, internal, ext uint16, lease time.Duration) (uint16, time.Duration, error) {
	secs := uint32(min(lease/time.Second, 604800)) // IGD v2's largest lease
	err := u.svc.AddPortMappingCtx(ctx, "", ext, string(proto), internal, u.client.String(), true, Description, secs)
	if err != nil && secs > 0 && upnpCode(err) == upnpPermanentOnly {
		secs = 0
		err = u.svc.AddPortMappingCtx(ctx, "", ext, string(proto), internal, u.client.String(), true, Description, 0)
	}
	if err != nil {
		return 0, 0, fmt.Errorf("%s: %w", u.method, err)
	}
	return ext, time.Duration(secs) * time.Second, nil
}

func (u *upnp) Delete(ctx context.Context, proto Protocol, _, ext uint16) error {
	if err := u.svc.DeletePortMappingCtx(ctx, "", ext, string(proto)); err != nil {
		return fmt.Errorf("%s: %w", u.method, err)
	}
	return nil
}

// discoverUPnP searches the LAN for an IGD (v2 and v1 at once) by SSDP and
// returns the first that has a WAN connection service.
func discoverUPnP(ctx context.Context) (Router, error) {
	type found struct {
		r   Router
		err error
	}
	ch := make(chan found, 2)
	for _, target := range []string{igdV2, igdV1} {
		go func() {
			r, err := searchIGD(ctx, target)
			ch <- found{r, err}
		}()
	}
	var errs []error
	for range 2 {
		f := <-ch
		if f.err == nil {
			return f.r, nil
		}
		errs = append(errs, f.err)
	}
	return nil, errors.Join(errs...)
}

// searchIGD runs one SSDP search for target.
func searchIGD(ctx context.Context, target string) (Router, error) {
	devs, err := goupnp.DiscoverDevicesCtx(ctx, target)
	if err != nil {
		return nil, fmt.Errorf("UPnP search: %w", err)
	}
	var errs []error
	for _, d := range devs {
		if d.Err != nil {
			errs = append(errs, d.Err)
			continue
		}
		r, err := fromRoot(d.Root, d.Location, d.LocalAddr)
		if err == nil {
			return r, nil
		}
		errs = append(errs, err)
	}
	if len(errs) == 0 {
		return nil, fmt.Errorf("no UPnP-IGD answered")
	}
	return nil, errors.Join(errs...)
}
