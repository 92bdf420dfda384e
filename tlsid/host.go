package tlsid

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"io/fs"
	"math/big"
	"os"
	"path/filepath"
	"time"

	"github.com/lockhost/lockhost/internal/atomicfile"
)

// Protocol is the ALPN protocol name both sides offer.
const Protocol = "lockhost/2"

// File names inside the folder given to LoadOrCreate.
const (
	// KeyFile holds the host's private key, PKCS#8 in PEM, mode 0600.
	KeyFile = "tls-key.pem"
	// CertFile holds the host's self-signed certificate in PEM, mode 0644.
	CertFile = "tls-cert.pem"
)

// CommonName is the subject common name of certificates made by
// LoadOrCreate.
const CommonName = "lockhost host"

// LoadOrCreate returns the host identity kept in dir. If dir/tls-key.pem and
// dir/tls-cert.pem both exist they are loaded and created is false. If
// neither exists, dir is made (0700) if needed, a new ECDSA P-256 key and a
// self-signed certificate valid for 20 years are made and written there
// (key first), and created is true. If only one of the two exists an error
// naming the missing file is returned: a key is never replaced silently.
func LoadOrCreate(dir string) (cert tls.Certificate, created bool, err error) {
	keyPath := filepath.Join(dir, KeyFile)
	certPath := filepath.Join(dir, CertFile)
	keyExists, err := exists(keyPath)
	if err != nil {
		return tls.Certificate{}, false, err
	}
	certExists, err := exists(certPath)
	if err != nil {
		return tls.Certificate{}, false, err
	}
	switch {
	case keyExists && certExists:
		cert, err := LoadFiles(certPath, keyPath)
		return cert, false, err
	case keyExists:
		return tls.Certificate{}, false, fmt.Errorf("tlsid: the TLS key %s exists but the certificate %s is missing; refusing to make a new identity over the old key: restore %s, or remove %s to make a new identity (joiners will then see a new fingerprint)", keyPath, certPath, certPath, keyPath)
	case certExists:
		return tls.Certificate{}, false, fmt.Errorf("tlsid: the TLS certificate %s exists but the key %s is missing; restore %s, or remove %s to make a new identity (joiners will then see a new fingerprint)", certPath, keyPath, keyPath, certPath)
	}

	certPEM, keyPEM, err := generate(time.Now())
	if err != nil {
		return tls.Certificate{}, false, err
	}
	cert, err = tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return tls.Certificate{}, false, fmt.Errorf("tlsid: new key pair: %w", err)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return tls.Certificate{}, false, fmt.Errorf("tlsid: make folder for TLS identity: %w", err)
	}
	if err := atomicfile.WriteFile(keyPath, keyPEM, 0o600); err != nil {
		return tls.Certificate{}, false, fmt.Errorf("tlsid: write %s: %w", keyPath, err)
	}
	if err := atomicfile.WriteFile(certPath, certPEM, 0o644); err != nil {
		// The key was made just now and never used: take it away again so
		// that the next attempt starts clean instead of finding a lone key.
		os.Remove(keyPath)
		return tls.Certificate{}, false, fmt.Errorf("tlsid: write %s: %w", certPath, err)
	}
	return cert, true, nil
}

// LoadFiles loads a certificate chain and its private key from PEM files,
// for hosts that use a real certificate instead of a generated one.
func LoadFiles(certFile, keyFile string) (tls.Certificate, error) {
	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("tlsid: load TLS certificate %s and key %s: %w", certFile, keyFile, err)
	}
	return cert, nil
}

// ServerConfig returns the TLS configuration a host listens with: TLS 1.3
// only, presenting cert, offering the protocol "lockhost/2".
func ServerConfig(cert tls.Certificate) *tls.Config {
	return &tls.Config{
		MinVersion:   tls.VersionTLS13,
		Certificates: []tls.Certificate{cert},
		NextProtos:   []string{Protocol},
	}
}

// exists reports whether path exists; errors other than its absence are
// returned.
func exists(path string) (bool, error) {
	_, err := os.Stat(path)
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, fs.ErrNotExist):
		return false, nil
	default:
		return false, fmt.Errorf("tlsid: %w", err)
	}
}

// generate makes a new P-256 key and a self-signed server certificate for
// it, both PEM-encoded.
func generate(now time.Time) (certPEM, keyPEM []byte, err error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, fmt.Errorf("tlsid: generate key: %w", err)
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 128))
	if err != nil {
		return nil, nil, fmt.Errorf("tlsid: generate serial number: %w", err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: CommonName},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.AddDate(20, 0, 0),
		KeyUsage:              x509.KeyUsageDigitalSignature,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, nil, fmt.Errorf("tlsid: make certificate: %w", err)
	}
	pkcs8, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, nil, fmt.Errorf("tlsid: encode key: %w", err)
	}
	certPEM = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	keyPEM = pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: pkcs8})
	return certPEM, keyPEM, nil
}
