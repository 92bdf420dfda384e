package main

import (
	"crypto/tls"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/lockhost/lockhost/tlsid"
)

// The lab runs itself inside a namespace for the small jobs no tool on
// the machine does: a STUN server for miniupnpd, and a TCP reach test.
const (
	helperSTUN  = "lab-stun"
	helperProbe = "lab-probe-tcp"
	helperGet   = "lab-get"
)

// runHelper runs the helper args name, if they name one; ok says they
// did.
func runHelper(args []string) (ok bool, code int) {
	if len(args) < 2 {
		return false, 0
	}
	if ok, code := iceHelper(args); ok {
		return ok, code
	}
	switch args[0] {
	case helperSTUN:
		if err := serveSTUN(args[1]); err != nil {
			fmt.Fprintln(os.Stderr, "stun:", err)
			return true, 1
		}
		return true, 0
	case helperGet:
		body, err := get(args[1])
		if err != nil {
			fmt.Fprintln(os.Stderr, "get:", err)
			return true, 1
		}
		fmt.Print(body)
		return true, 0
	case helperNATServers:
		if err := serveNATProbe(); err != nil {
			fmt.Fprintln(os.Stderr, "nat probe servers:", err)
			return true, 1
		}
		return true, 0
	case helperNATProbe:
		if err := runNATProbe(); err != nil {
			fmt.Fprintln(os.Stderr, "nat probe:", err)
			return true, 1
		}
		return true, 0
	case helperBrowser:
		if len(args) < 3 {
			fmt.Fprintln(os.Stderr, "browser: give the link and a name")
			return true, 2
		}
		if err := runBrowser(args[1], args[2]); err != nil {
			fmt.Fprintln(os.Stderr, "browser:", err)
			return true, 1
		}
		return true, 0
	case helperProbe:
		if err := probeTCP(args[1]); err != nil {
			fmt.Println("unreachable:", err)
			return true, 1
		}
		fmt.Println("reached", args[1])
		return true, 0
	}
	return false, 0
}

// get fetches url (the host's status page, inside a namespace); a
// "#sha256:..." after it is the fingerprint the server's certificate
// must have, in place of a certificate authority.
func get(url string) (string, error) {
	c := &http.Client{Timeout: 5 * time.Second}
	if u, pin, ok := strings.Cut(url, "#"); ok {
		url = u
		c.Transport = &http.Transport{TLSClientConfig: &tls.Config{
			InsecureSkipVerify: true, // the fingerprint below stands in for a chain
			VerifyConnection: func(cs tls.ConnectionState) error {
				if len(cs.PeerCertificates) == 0 || tlsid.FingerprintDER(cs.PeerCertificates[0].Raw) != pin {
					return fmt.Errorf("the server's certificate is not %s", pin)
				}
				return nil
			}}}
	}
	resp, err := c.Get(url)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return "", err
	}
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("%s: %s", url, resp.Status)
	}
	return string(b), nil
}

// probeTCP opens a TCP connection to addr, waiting at most two seconds.
func probeTCP(addr string) error {
	c, err := net.DialTimeout("tcp", addr, 2*time.Second)
	if err != nil {
		return err
	}
	return c.Close()
}

// serveSTUN answers STUN binding requests (RFC 5389) on addr with the
// address they came from, from the address they were sent to. That is all
// miniupnpd's check of its WAN address asks: four answers, one per
// request, all naming the same address.
func serveSTUN(addr string) error {
	pc, err := net.ListenPacket("udp4", addr)
	if err != nil {
		return err
	}
	defer pc.Close()
	buf := make([]byte, 1500)
	for {
		n, from, err := pc.ReadFrom(buf)
		if err != nil {
			return err
		}
		req := buf[:n]
		if n < 20 || binary.BigEndian.Uint16(req) != 0x0001 {
			continue
		}
		ua := from.(*net.UDPAddr)
		ip4 := ua.IP.To4()
		if ip4 == nil {
			continue
		}
		resp := make([]byte, 20, 32)
		binary.BigEndian.PutUint16(resp, 0x0101) // binding success response
		binary.BigEndian.PutUint16(resp[2:], 12)
		copy(resp[4:20], req[4:20])                             // magic cookie and transaction ID
		resp = append(resp, 0x00, 0x01, 0x00, 0x08, 0x00, 0x01) // MAPPED-ADDRESS, IPv4
		resp = binary.BigEndian.AppendUint16(resp, uint16(ua.Port))
		resp = append(resp, ip4...)
		_, _ = pc.WriteTo(resp, from)
	}
}
