package pinkeeper

import (
	"crypto/tls"
	"crypto/x509"
	"net"
	"strings"
	"testing"

	"pinkeeper.local/reader/internal/testfiles"
	"pinkeeper.local/reader/internal/testpki"
)

// Hosts spelled another way (docs/protocol.md, "H in one spelling"). The store pins the loopback
// addresses and api.example.com and lets every other name through unpinned, so a reader that
// looked up "0:0:0:0:0:0:0:1" as it is spelled would skip pinning for it. The server presents a
// certificate that the platform accepts for all three names but no pin names.
func TestOddHostSpellingsAreRefusedOnLoopback(t *testing.T) {
	p := thePKI(t)
	exempting := map[string]interface{}{"sslPinningRequiredForUnlisted": false, "domains": []map[string]interface{}{
		{"name": "::1", "sslPinningRequired": true}, {"name": "127.0.0.1", "sslPinningRequired": true},
		{"name": testHost, "sslPinningRequired": true}}}
	reader, _ := newStore(t, testfiles.CacheDocument(t, "banking", exempting, testfiles.Pin(testHost, p.pinned.Fingerprint(), 0),
		testfiles.Pin("::1", p.pinned.Fingerprint(), 0), testfiles.Pin("127.0.0.1", p.pinned.Fingerprint(), 0)))
	loopback := testpki.Issue(t, testpki.Spec{CommonName: "loopback", DNSNames: []string{testHost},
		IPs: []net.IP{net.IPv6loopback, net.IPv4(127, 0, 0, 1)}}, &p.intermediate)
	if exempting := (&DomainsConfig{Domains: []Domain{{"::1", true}}}); exempting.PinningRequired("0:0:0:0:0:0:0:1") {
		t.Fatal("the spelling is listed as it is: the attack below would not be one")
	}
	server := startServer(t, false, loopback, p.intermediate)
	for spelling, reason := range map[string]string{
		"[0:0:0:0:0:0:0:1]": "there is no verified host name", // crypto/tls sends no SNI for an address
		"[::0:1]":           "there is no verified host name",
		"[::1]":             "there is no verified host name", // nor for the address in its one form
		"127.0.0.1":         "there is no verified host name",
		"127.000.000.001":   "certificate is valid for", // not an address to Go: a name no SAN matches
		"0177.0.0.1":        "certificate is valid for",
	} {
		mustRefuse(t, spelling, server, pinnedTransport(reader, server, nil), spelling, reason)
	}
	// The attack is real: the platform alone accepts the certificate for the spellings it reads.
	for _, spelling := range []string{"[0:0:0:0:0:0:0:1]", "[::0:1]", "127.0.0.1"} {
		mustPass(t, spelling+" (control)", server, plainTransport(server, &tls.Config{RootCAs: p.roots}), spelling)
	}
	// The name in its one form, and spellings of it, still connect with the pinned certificate.
	pinned := startServer(t, false, p.pinned, p.intermediate)
	for _, spelling := range []string{testHost, "API.Example.COM", testHost + "."} {
		mustPass(t, spelling, pinned, pinnedTransport(reader, pinned, nil), spelling)
	}
	mustRefuse(t, "api.example.com, unpinned", server, pinnedTransport(reader, server, nil), testHost, "(untrusted)")
}

// Whatever name crypto/tls reports as verified goes through CanonicalHost: one it cannot put in
// one form refuses the connection, and one in another spelling is judged in its one form.
func TestTheVerifiedNameIsPutInOneForm(t *testing.T) {
	p := thePKI(t)
	reader, _ := newStore(t, testfiles.CacheDocument(t, "banking", nil,
		testfiles.Pin(testHost, p.pinned.Fingerprint(), 0), testfiles.Pin("127.0.0.1", p.pinned.Fingerprint(), 0)))
	chains := [][]*x509.Certificate{{p.pinned.Certificate, p.intermediate.Certificate, p.root.Certificate}}
	for name, refused := range map[string]bool{
		"127.000.000.001": true, "127.0.0.1": false, "api.example.com..": true, "API.EXAMPLE.COM.": false,
		"api\u3002example\u3002com": true, "[::1]:443": true, "fe80::1%eth0": true,
	} {
		err := reader.VerifyConnection(tls.ConnectionState{ServerName: name, VerifiedChains: chains})
		switch {
		case refused && (err == nil || !strings.Contains(err.Error(), "has no one spelling")):
			t.Errorf("%q: %v, expected a refusal of the spelling", name, err)
		case !refused && err != nil:
			t.Errorf("%q: %v", name, err)
		}
	}
}
