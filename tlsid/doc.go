// Package tlsid holds the TLS identity of a lockhost host and the pinning of
// it by joiners.
//
// A host has one long-lived key pair, made on first start by LoadOrCreate
// (a self-signed certificate, since a lockhost host seldom has a name a
// certificate authority would vouch for) or loaded from real certificate
// files by LoadFiles. Its identity is the SHA-256 fingerprint of its
// certificate, written "sha256:" followed by 64 lowercase hex digits.
//
// A joiner does not check certificate chains. Instead ClientConfig pins the
// host's fingerprint: to one given on the command line (--fingerprint), or
// to the one remembered for that address in a KnownHosts file, or, on first
// contact with an address, it trusts the certificate it sees and lets the
// caller remember it once the join succeeds (trust on first use, as ssh
// does). A host that later presents a different certificate is refused with
// a *MismatchError.
//
// Only TLS 1.3 is spoken, with the application protocol "lockhost/2".
package tlsid
