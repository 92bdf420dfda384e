package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"time"
)

// The internet's servers for step 6: Debian's coturn (STUN, and TURN
// with the TURN REST convention's shared secret) and host coordinator
// handing out its credentials.
const (
	turnSecret = "nat-lab-turn-secret"
	turnRealm  = "lockhost.lab"
)

// turnURLs are the TURN server's URLs the coordinator hands out: UDP and
// TCP on 3478, TLS on 443 (where nothing else passes).
var turnURLs = []string{
	"turn:" + turnAddr + ":3478?transport=udp",
	"turn:" + turnAddr + ":3478?transport=tcp",
	"turns:" + turnAddr + ":443?transport=tcp",
}

var reCoordURL = regexp.MustCompile(`hosts register with:\n  host serve --coordinator (\S+)\n`)

// startInternet starts coturn and the coordinator once.
func (l *lab) startInternet() error {
	if l.nat.coord != nil {
		return nil
	}
	t0 := time.Now()
	if err := l.startTURN(); err != nil {
		return err
	}
	args := []string{l.hostBin, "coordinator", "--listen", coordAddr + ":443", "--data-dir", filepath.Join(l.dir, "coordinator"),
		"--public-url", "https://" + coordAddr, "--lookup-rate", "-1", "--register-rate", "-1"}
	for _, u := range turnURLs {
		args = append(args, "--turn-url", u)
	}
	p, err := start("coordinator", nsInet, false, []string{"LOCKHOST_TURN_SECRET=" + turnSecret}, args...)
	if err != nil {
		return err
	}
	l.nat.coord = p
	m, err := p.waitFor(reCoordURL, 30*time.Second)
	if err != nil {
		return err
	}
	l.nat.coordURL = m[1]
	fmt.Printf("nat-lab: coordinator %s and coturn (%s) up (%.1f s)\n", l.nat.coordURL, turnVersion(), time.Since(t0).Seconds())
	return nil
}

// startTURN starts coturn on the TURN address: STUN and TURN on 3478
// (UDP and TCP), TURN over TLS on 443 with a self-signed certificate that
// the hosts and joiners trust as their only root (SSL_CERT_FILE).
func (l *lab) startTURN() error {
	cert, key := filepath.Join(l.dir, "turn-cert.pem"), filepath.Join(l.dir, "turn-key.pem")
	if err := writeSelfSigned(turnAddr, cert, key); err != nil {
		return err
	}
	l.nat.certFile = cert
	args := []string{"turnserver", "-n", "--listening-ip=" + turnAddr, "--relay-ip=" + turnAddr,
		"--listening-port=3478", "--tls-listening-port=443", "--cert=" + cert, "--pkey=" + key, "--no-dtls", "--no-cli",
		"--use-auth-secret", "--static-auth-secret=" + turnSecret, "--realm=" + turnRealm, "--no-multicast-peers",
		"--log-file=stdout", "--simple-log", "--pidfile=" + filepath.Join(l.dir, "turnserver.pid")}
	if l.verbose {
		args = append(args, "--verbose")
	}
	p, err := start("turnserver", nsInet, false, nil, args...)
	if err != nil {
		return err
	}
	l.nat.turn = p
	for _, port := range []string{"3478", "443"} {
		if err := waitTCP(nsInet, net.JoinHostPort(turnAddr, port), p); err != nil {
			return err
		}
	}
	return nil
}

// waitTCP waits until something in namespace ns listens on the TCP
// address addr, failing once p exits.
func waitTCP(ns, addr string, p *proc) error {
	deadline := time.Now().Add(15 * time.Second)
	for {
		out, err := in(ns, "ss", "-Hltn", "src", addr)
		if err == nil && out != "" {
			return nil
		}
		if !p.running() || time.Now().After(deadline) {
			return fmt.Errorf("%s does not listen on %s; its output ends:\n%s", p.name, addr, tail(p.out.String(), 15))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// turnVersion is coturn's version as it reports it.
func turnVersion() string {
	out, err := sh("turnserver", "--version")
	if err != nil {
		return "turnserver"
	}
	return "turnserver " + firstLine(out)
}

// firstLine is s's first line, trimmed.
func firstLine(s string) string {
	for i, c := range s {
		if c == '\n' {
			return s[:i]
		}
	}
	return s
}

// writeSelfSigned writes a self-signed certificate for the IP address ip
// (a CA, so that it can be a root) and its key, PEM.
func writeSelfSigned(ip, certFile, keyFile string) error {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: ip},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IPAddresses: []net.IP{net.ParseIP(ip)}, IsCA: true, BasicConstraintsValid: true,
		KeyUsage:    x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return err
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return err
	}
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644); err != nil {
		return err
	}
	return os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}), 0o600)
}
