package pinkeeper

import (
	"crypto/tls"
	"errors"
	"net"
	"net/http"
	"time"
)

// PinningError is why a connection was refused: the verdict (Untrusted or Empty), or no verdict
// at all when there was nothing to decide by (no verified host name or chain).
type PinningError struct {
	Store   string
	Names   PeerNames
	Verdict Verdict // meaningful when Decided
	Decided bool
	Reason  string
}

func (e *PinningError) Error() string {
	if !e.Decided {
		return "pinkeeper: store '" + Escaped(e.Store) + "' refuses the connection: " + e.Reason
	}
	return "pinkeeper: store '" + Escaped(e.Store) + "' does not pin the certificate chain of " + e.Names.Described() +
		" (" + e.Verdict.String() + ")"
}

// VerifyConnection checks the pins of a connection that crypto/tls has verified, for use as
// tls.Config.VerifyConnection on a client (TLSConfig sets it). crypto/tls calls it after it
// verified the chain and the host name, on every handshake (resumed ones included), before any
// application data is sent; an error aborts the handshake.
//
// H is cs.ServerName in its one form (CanonicalHost): the name the client sent as SNI, which is
// the tls.Config.ServerName that crypto/x509 verified the certificate for (net/http sets it to
// the URL host), without its trailing dots (x509 matches "api.example.com." as "api.example.com"
// too). It refuses:
//   - a connection without a verified chain (cs.VerifiedChains is empty when InsecureSkipVerify
//     is set): the pins would be compared with certificates nobody verified;
//   - a connection without a server name: crypto/tls sends no SNI for an IP address and the
//     connection state does not say which address was verified, so there is no H;
//   - a server name CanonicalHost refuses (a spelling that has no one form).
//
// N is the leaf's most specific common name (CommonName). Pins are compared with the verified
// chains only, never with cs.PeerCertificates, which the server chose: a pin of depth d matches
// when the certificate at depth d of one of the chains crypto/x509 verified is the pinned one.
func (r *Reader) VerifyConnection(cs tls.ConnectionState) error {
	refuse := func(reason string) error {
		return &PinningError{Store: r.store, Names: Host(cs.ServerName), Reason: reason}
	}
	if len(cs.VerifiedChains) == 0 || len(cs.VerifiedChains[0]) == 0 {
		return refuse("there is no verified certificate chain (is InsecureSkipVerify set?)")
	}
	if cs.ServerName == "" {
		return refuse("there is no verified host name (an IP address, for which no server name is sent?)")
	}
	names := Host(cs.ServerName)
	if _, ok := names.CanonicalHostName(); !ok {
		return refuse("the verified host name '" + Escaped(cs.ServerName) + "' has no one spelling (docs/protocol.md): " +
			"connect by the name the certificate was issued for")
	}
	if commonName, ok := CommonName(cs.VerifiedChains[0][0]); ok {
		names = HostAndCommonName(cs.ServerName, commonName)
	}
	verdict := r.VerdictForVerifiedChains(names, cs.VerifiedChains, time.Now())
	if verdict != Trusted {
		return &PinningError{Store: r.store, Names: names, Verdict: verdict, Decided: true}
	}
	return nil
}

// TLSConfig is a client configuration that checks the pins on top of crypto/tls's verification:
// a clone of base (nil: a new one, verifying against the system's roots), whose VerifyConnection
// runs this reader's check and then base's own VerifyConnection, if it has one. Everything else
// of base (RootCAs, client certificates, ServerName, session cache ...) is kept. A base with
// InsecureSkipVerify set is not refused here, but every connection is: no chain is verified.
func (r *Reader) TLSConfig(base *tls.Config) *tls.Config {
	config := &tls.Config{}
	if base != nil {
		config = base.Clone()
	}
	theirs := config.VerifyConnection
	config.VerifyConnection = func(cs tls.ConnectionState) error {
		if err := r.VerifyConnection(cs); err != nil {
			return err
		}
		if theirs != nil {
			return theirs(cs)
		}
		return nil
	}
	return config
}

// Transport is a clone of http.DefaultTransport (proxies from the environment, HTTP/2, its time
// limits) whose TLSClientConfig is TLSConfig(base). Change its dialing with DialContext only:
// a DialTLSContext (or DialTLS) set on it makes its own TLS connections, and the pins are not
// checked for them. For that reason the clone drops what a program or library may have put on
// the default transport that would bypass TLSClientConfig: its TLS dialers, and TLSNextProto,
// whose upgrade functions (x/net/http2's ConfigureTransport) would hand requests to the default
// transport's own HTTP/2 connections, opened without the pins.
func (r *Reader) Transport(base *tls.Config) *http.Transport {
	transport, ok := http.DefaultTransport.(*http.Transport)
	if ok {
		transport = transport.Clone()
		transport.DialTLSContext, transport.DialTLS, transport.TLSNextProto = nil, nil, nil
	} else { // a program replaced the default: start from net/http's defaults
		transport = &http.Transport{
			Proxy:                 http.ProxyFromEnvironment,
			DialContext:           (&net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
			ForceAttemptHTTP2:     true,
			MaxIdleConns:          100,
			IdleConnTimeout:       90 * time.Second,
			TLSHandshakeTimeout:   10 * time.Second,
			ExpectContinueTimeout: 1 * time.Second,
		}
	}
	transport.TLSClientConfig = r.TLSConfig(base)
	return transport
}

// Client is an http.Client on Transport(base).
func (r *Reader) Client(base *tls.Config) *http.Client {
	return &http.Client{Transport: r.Transport(base)}
}

// IsPinningError reports whether err (as a handshake or an HTTP request returns it) is a refusal
// by the pins, and returns it.
func IsPinningError(err error) (*PinningError, bool) {
	var pinning *PinningError
	ok := errors.As(err, &pinning)
	return pinning, ok
}
