package pinkeeper

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"pinkeeper.local/reader/internal/testfiles"
	"pinkeeper.local/reader/internal/testpki"
)

// HTTPS servers on loopback, with certificates made at test time, and clients of net/http and
// crypto/tls reaching them as https://api.example.com/ (a DialContext takes every connection to
// the server; the TLS layer still verifies and sends SNI for api.example.com). Every attack is
// run twice: through the pinning helper, which must refuse it before the server sees a request,
// and through a client without the defence under test, which the server must answer: that shows
// the attack is real and the test can fail.

const testHost = "api.example.com"

type testPKI struct {
	root, intermediate, otherIntermediate, otherRoot testpki.Issued
	pinned, unpinned, stray, wrongCommonName         testpki.Issued
	untrusted, addressed                             testpki.Issued
	roots                                            *x509.CertPool
}

var (
	pkiOnce   sync.Once
	sharedPKI *testPKI
)

func thePKI(t *testing.T) *testPKI {
	pkiOnce.Do(func() {
		p := &testPKI{}
		p.root = testpki.Issue(t, testpki.Spec{CommonName: "pinkeeper test root", IsCA: true}, nil)
		p.intermediate = testpki.Issue(t, testpki.Spec{CommonName: "pinkeeper test intermediate", IsCA: true}, &p.root)
		p.otherIntermediate = testpki.Issue(t, testpki.Spec{CommonName: "pinkeeper other intermediate", IsCA: true}, &p.root)
		p.otherRoot = testpki.Issue(t, testpki.Spec{CommonName: "untrusted root", IsCA: true}, nil)
		leaf := func(commonName string, issuer *testpki.Issued) testpki.Issued {
			return testpki.Issue(t, testpki.Spec{CommonName: commonName, DNSNames: []string{testHost}}, issuer)
		}
		p.pinned = leaf(testHost, &p.intermediate)
		p.unpinned = leaf(testHost, &p.intermediate)
		p.stray = leaf(testHost, &p.intermediate)
		// For api.example.com, with a CN the certificate's holder chose (docs/protocol.md, "the host decides").
		p.wrongCommonName = leaf("unlisted.example", &p.intermediate)
		p.untrusted = leaf(testHost, &p.otherRoot)
		p.addressed = testpki.Issue(t, testpki.Spec{CommonName: "127.0.0.1", IPs: []net.IP{net.IPv4(127, 0, 0, 1)}}, &p.intermediate)
		p.roots = x509.NewCertPool()
		p.roots.AddCert(p.root.Certificate)
		sharedPKI = p
	})
	if sharedPKI == nil {
		t.Fatal("the test PKI could not be made")
	}
	return sharedPKI
}

// testServer is an HTTPS server on loopback that presents chain and counts the requests it answers.
type testServer struct {
	*httptest.Server
	requests  atomic.Int32
	resumed   atomic.Int32 // handshakes the server resumed
	handshake atomic.Int32
}

func startServer(t *testing.T, http2 bool, leaf testpki.Issued, extra ...testpki.Issued) *testServer {
	t.Helper()
	server := &testServer{}
	server.Server = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		server.requests.Add(1)
		_, _ = io.WriteString(w, "hello")
	}))
	chain := [][]byte{leaf.Certificate.Raw}
	for _, certificate := range extra {
		chain = append(chain, certificate.Certificate.Raw)
	}
	server.EnableHTTP2 = http2
	server.TLS = &tls.Config{
		Certificates: []tls.Certificate{{Certificate: chain, PrivateKey: leaf.Key}},
		VerifyConnection: func(cs tls.ConnectionState) error {
			server.handshake.Add(1)
			if cs.DidResume {
				server.resumed.Add(1)
			}
			return nil
		},
	}
	server.Config.ErrorLog = log.New(io.Discard, "", 0) // refused handshakes are expected here
	server.StartTLS()
	t.Cleanup(server.Close)
	return server
}

// toServer makes every connection of transport go to server, whatever the URL's host.
func toServer(transport *http.Transport, server *testServer) *http.Transport {
	address := server.Listener.Addr().String()
	transport.Proxy = nil
	transport.DialContext = func(ctx context.Context, network, _ string) (net.Conn, error) {
		return (&net.Dialer{Timeout: 5 * time.Second}).DialContext(ctx, network, address)
	}
	return transport
}

// get requests https://host/ through transport; the response's protocol major version, or an error.
func get(t *testing.T, transport *http.Transport, host string) (int, error) {
	t.Helper()
	client := &http.Client{Transport: transport, Timeout: 10 * time.Second}
	defer transport.CloseIdleConnections()
	response, err := client.Get("https://" + host + "/")
	if err != nil {
		return 0, err
	}
	defer response.Body.Close()
	body, err := io.ReadAll(response.Body)
	if err != nil || string(body) != "hello" {
		t.Fatalf("unexpected response %q: %v", body, err)
	}
	return response.ProtoMajor, nil
}

// pinnedTransport is the helper under test for server, verifying against the test root.
func pinnedTransport(reader *Reader, server *testServer, base *tls.Config) *http.Transport {
	if base == nil {
		base = &tls.Config{}
	}
	base.RootCAs = sharedPKI.roots
	return toServer(reader.Transport(base), server)
}

// plainTransport is a client without the helper: the platform's verification only.
func plainTransport(server *testServer, config *tls.Config) *http.Transport {
	transport := http.DefaultTransport.(*http.Transport).Clone()
	transport.TLSClientConfig = config
	return toServer(transport, server)
}

func mustPass(t *testing.T, what string, server *testServer, transport *http.Transport, host string) int {
	t.Helper()
	before := server.requests.Load()
	protocol, err := get(t, transport, host)
	if err != nil {
		t.Fatalf("%s: refused: %v", what, err)
	}
	if server.requests.Load() != before+1 {
		t.Fatalf("%s: the server did not answer the request", what)
	}
	return protocol
}

// mustRefuse: the request fails with an error that contains reason, and the server never sees it.
func mustRefuse(t *testing.T, what string, server *testServer, transport *http.Transport, host, reason string) error {
	t.Helper()
	before := server.requests.Load()
	_, err := get(t, transport, host)
	if err == nil {
		t.Fatalf("%s: the request went through", what)
	}
	if !strings.Contains(err.Error(), reason) {
		t.Fatalf("%s: refused for another reason than %q: %v", what, reason, err)
	}
	if server.requests.Load() != before {
		t.Fatalf("%s: the server received the request although the client refused the connection", what)
	}
	return err
}

func TestPinnedServersPassOverHTTP1AndHTTP2(t *testing.T) {
	p := thePKI(t)
	reader, _ := newStore(t, testfiles.CacheDocument(t, "banking", nil,
		testfiles.Pin(testHost, p.pinned.Fingerprint(), 0), testfiles.Pin(testHost, p.otherIntermediate.Fingerprint(), 1)))
	for _, http2 := range []bool{false, true} {
		leafPinned := startServer(t, http2, p.pinned, p.intermediate)
		protocol := mustPass(t, "pinned leaf", leafPinned, pinnedTransport(reader, leafPinned, nil), testHost)
		if protocol != map[bool]int{false: 1, true: 2}[http2] {
			t.Fatalf("HTTP/%d, expected HTTP/2: %v", protocol, http2)
		}
		// The other intermediate is pinned at depth 1 and is the issuer in the verified chain.
		viaIntermediate := testpki.Issue(t, testpki.Spec{CommonName: testHost, DNSNames: []string{testHost}}, &p.otherIntermediate)
		depthPinned := startServer(t, http2, viaIntermediate, p.otherIntermediate)
		mustPass(t, "intermediate pinned at depth 1", depthPinned, pinnedTransport(reader, depthPinned, nil), testHost)
	}
}

func TestAttacksAreRefusedBeforeAnyRequest(t *testing.T) {
	p := thePKI(t)
	reader, _ := newStore(t, testfiles.CacheDocument(t, "banking", testfiles.PinningRequiredOnlyFor(testHost),
		testfiles.Pin(testHost, p.pinned.Fingerprint(), 0),
		testfiles.Pin("other.example.com", p.unpinned.Fingerprint(), 0),
		testfiles.Pin("other.example.com", p.untrusted.Fingerprint(), 0),
		testfiles.Pin(testHost, p.untrusted.Fingerprint(), 0),
		testfiles.Pin(testHost, p.otherIntermediate.Fingerprint(), 2)))

	// Controls: what a helper without each defence would do.
	plain := &tls.Config{RootCAs: p.roots}
	skipVerify := &tls.Config{InsecureSkipVerify: true}
	presentedChain := &tls.Config{RootCAs: p.roots, VerifyConnection: func(cs tls.ConnectionState) error {
		// Pins compared with what the server sent, as if it were the verified chain.
		if reader.VerdictForVerifiedChains(Host(cs.ServerName), [][]*x509.Certificate{cs.PeerCertificates}, time.Now()) != Trusted {
			return errors.New("not pinned")
		}
		return nil
	}}
	commonNameOnly := &tls.Config{RootCAs: p.roots, VerifyConnection: func(cs tls.ConnectionState) error {
		// Deciding by the certificate's own name: the bypass "the host decides" (docs/protocol.md) closes.
		name, _ := CommonName(cs.PeerCertificates[0])
		if reader.VerdictForVerifiedChains(Host(name), cs.VerifiedChains, time.Now()) != Trusted {
			return errors.New("not pinned")
		}
		return nil
	}}

	attacks := []struct {
		name    string
		leaf    testpki.Issued
		extra   []testpki.Issued
		control *tls.Config
		reason  string
	}{
		{"an unpinned certificate", p.stray, []testpki.Issued{p.intermediate}, plain, "(untrusted)"},
		{"a certificate pinned for another host", p.unpinned, []testpki.Issued{p.intermediate}, plain, "(untrusted)"},
		{"a pinned certificate from an untrusted authority", p.untrusted, nil, skipVerify, "certificate signed by unknown authority"},
		{"a pinned intermediate appended outside the verified path", p.unpinned, []testpki.Issued{p.intermediate, p.otherIntermediate},
			presentedChain, "(untrusted)"},
		{"a common name other than the required host (the host decides)", p.wrongCommonName, []testpki.Issued{p.intermediate},
			commonNameOnly, "(certificate common name 'unlisted.example') (untrusted)"},
	}
	for _, attack := range attacks {
		for _, http2 := range []bool{false, true} {
			server := startServer(t, http2, attack.leaf, attack.extra...)
			err := mustRefuse(t, attack.name, server, pinnedTransport(reader, server, nil), testHost, attack.reason)
			if _, pinning := IsPinningError(err); pinning != strings.HasSuffix(attack.reason, "(untrusted)") {
				t.Fatalf("%s: IsPinningError is %v for %v", attack.name, pinning, err)
			}
			mustPass(t, attack.name+" (control: "+map[bool]string{false: "HTTP/1.1", true: "HTTP/2"}[http2]+")",
				server, plainTransport(server, attack.control.Clone()), testHost)
		}
	}
}

func TestAPinnedIntermediateMatchesOnlyInTheVerifiedChain(t *testing.T) {
	p := thePKI(t)
	reader, _ := newStore(t, testfiles.CacheDocument(t, "banking", nil, testfiles.Pin(testHost, p.otherIntermediate.Fingerprint(), 2)))
	server := startServer(t, false, p.unpinned, p.intermediate, p.otherIntermediate)
	// Sent at position 2, but the verified chain is leaf, intermediate, root.
	mustRefuse(t, "appended intermediate", server, pinnedTransport(reader, server, nil), testHost, "(untrusted)")
}

func TestConnectionsWithoutAVerifiedHostOrChainAreRefused(t *testing.T) {
	p := thePKI(t)
	reader, _ := newStore(t, testfiles.CacheDocument(t, "banking", nil,
		testfiles.Pin(testHost, p.pinned.Fingerprint(), 0), testfiles.Pin("127.0.0.1", p.addressed.Fingerprint(), 0),
		testfiles.Pin("", p.addressed.Fingerprint(), 0)))

	// InsecureSkipVerify: no chain is verified, so none can be compared.
	pinned := startServer(t, false, p.pinned, p.intermediate)
	mustRefuse(t, "InsecureSkipVerify", pinned, pinnedTransport(reader, pinned, &tls.Config{InsecureSkipVerify: true}), testHost,
		"there is no verified certificate chain")
	mustPass(t, "control", pinned, pinnedTransport(reader, pinned, nil), testHost)

	// An IP address: crypto/tls verifies it but sends no SNI, and the state has no host.
	addressed := startServer(t, false, p.addressed, p.intermediate)
	mustRefuse(t, "IP address", addressed, pinnedTransport(reader, addressed, nil), "127.0.0.1", "there is no verified host name")
	mustPass(t, "IP address (control)", addressed, plainTransport(addressed, &tls.Config{RootCAs: p.roots}), "127.0.0.1")
}

func TestTLSDialersOnTheDefaultTransportAreNotInherited(t *testing.T) {
	p := thePKI(t)
	reader, _ := newStore(t, testfiles.CacheDocument(t, "banking", nil, testfiles.Pin(testHost, p.pinned.Fingerprint(), 0)))
	unpinned := startServer(t, false, p.unpinned, p.intermediate)
	defaults := http.DefaultTransport.(*http.Transport)
	saved := defaults.DialTLSContext
	defer func() { defaults.DialTLSContext = saved }()
	// What a library may do to the default transport: TLS connections of its own making.
	defaults.DialTLSContext = func(ctx context.Context, network, _ string) (net.Conn, error) {
		dialer := &tls.Dialer{Config: &tls.Config{RootCAs: p.roots, ServerName: testHost}}
		return dialer.DialContext(ctx, network, unpinned.Listener.Addr().String())
	}
	mustPass(t, "control: a clone of the default transport dials through it", unpinned,
		plainTransport(unpinned, &tls.Config{RootCAs: p.roots}), testHost)
	mustRefuse(t, "the pinned transport", unpinned, pinnedTransport(reader, unpinned, nil), testHost, "does not pin")
}

func TestTheCallersVerifyConnectionStillRuns(t *testing.T) {
	p := thePKI(t)
	reader, _ := newStore(t, testfiles.CacheDocument(t, "banking", nil, testfiles.Pin(testHost, p.pinned.Fingerprint(), 0)))
	server := startServer(t, false, p.pinned, p.intermediate)
	var calls atomic.Int32
	theirs := &tls.Config{VerifyConnection: func(cs tls.ConnectionState) error {
		calls.Add(1)
		if calls.Load() > 1 {
			return errors.New("refused by the caller's own check")
		}
		return nil
	}}
	mustPass(t, "first", server, pinnedTransport(reader, server, theirs), testHost)
	mustRefuse(t, "second", server, pinnedTransport(reader, server, theirs), testHost, "refused by the caller's own check")
	if calls.Load() != 2 {
		t.Fatalf("the caller's VerifyConnection ran %d times, expected 2", calls.Load())
	}
}

// crypto/tls calls VerifyConnection on resumed handshakes too (with the chains verified when the
// session began): new pins apply to the next connection even when it resumes a session.
func TestResumedSessionsAreCheckedAgainstTheCurrentPins(t *testing.T) {
	p := thePKI(t)
	reader, directory := newStore(t, testfiles.CacheDocument(t, "banking", nil, testfiles.Pin(testHost, p.pinned.Fingerprint(), 0)))
	for _, version := range []uint16{tls.VersionTLS12, tls.VersionTLS13} {
		server := startServer(t, false, p.pinned, p.intermediate)
		base := &tls.Config{ClientSessionCache: tls.NewLRUClientSessionCache(8), MinVersion: version, MaxVersion: version}
		transport := pinnedTransport(reader, server, base)
		transport.DisableKeepAlives = true // a new connection (and handshake) per request
		testfiles.Publish(t, directory, "banking", testfiles.CacheDocument(t, "banking", nil, testfiles.Pin(testHost, p.pinned.Fingerprint(), 0)))
		mustPass(t, "full handshake", server, transport, testHost)
		mustPass(t, "resumed", server, transport, testHost)
		if server.resumed.Load() != 1 {
			t.Fatalf("TLS %x: %d resumed handshakes, expected 1", version, server.resumed.Load())
		}
		testfiles.Publish(t, directory, "banking",
			testfiles.CacheDocument(t, "banking", nil, testfiles.Pin(testHost, p.unpinned.Fingerprint(), 0)))
		mustRefuse(t, "resumed after the pins changed", server, transport, testHost, "(untrusted)")
		// The server's side of the handshake may still be running when the client gave up.
		for deadline := time.Now().Add(5 * time.Second); server.handshake.Load() < 3 && time.Now().Before(deadline); {
			time.Sleep(10 * time.Millisecond)
		}
		if server.resumed.Load() != 2 {
			t.Fatalf("TLS %x: the refused handshake was not a resumption (%d resumed)", version, server.resumed.Load())
		}
	}
}

func TestTLSDialWithTheConfig(t *testing.T) {
	p := thePKI(t)
	reader, _ := newStore(t, testfiles.CacheDocument(t, "banking", nil, testfiles.Pin(testHost, p.pinned.Fingerprint(), 0)))
	for _, leaf := range []testpki.Issued{p.pinned, p.unpinned} {
		server := startServer(t, false, leaf, p.intermediate)
		config := reader.TLSConfig(&tls.Config{RootCAs: p.roots, ServerName: testHost})
		connection, err := tls.Dial("tcp", server.Listener.Addr().String(), config)
		if leaf == p.pinned {
			if err != nil {
				t.Fatalf("pinned: %v", err)
			}
			connection.Close()
		} else if _, pinning := IsPinningError(err); !pinning {
			t.Fatalf("unpinned: expected a PinningError, got %v", err)
		}
	}
	// The base configuration is cloned, never changed.
	base := &tls.Config{RootCAs: p.roots}
	if reader.TLSConfig(base); base.VerifyConnection != nil {
		t.Fatal("TLSConfig changed its base")
	}
}

// net/http converts a URL host to its ASCII form (IDNA: U+3002 is a dot, fullwidth letters are
// letters) before it verifies the certificate for it and sends it as SNI; H is that name too,
// so pins apply to every spelling of it, and crypto/x509 never verifies a non-ASCII name.
func TestHostsAreJudgedInTheFormThatWasVerified(t *testing.T) {
	p := thePKI(t)
	reader, _ := newStore(t, testfiles.CacheDocument(t, "banking", testfiles.PinningRequiredOnlyFor(testHost),
		testfiles.Pin(testHost, p.pinned.Fingerprint(), 0)))
	spellings := map[string]string{
		"api\u3002example\u3002com": testHost, "\uff41pi.example.com": testHost, "API.example.com": "API.example.com",
	}
	for spelling, host := range spellings {
		attack := startServer(t, false, p.wrongCommonName, p.intermediate)
		mustRefuse(t, spelling, attack, pinnedTransport(reader, attack, nil), spelling,
			"'"+host+"' (certificate common name 'unlisted.example') (untrusted)")
		pinned := startServer(t, false, p.pinned, p.intermediate)
		mustPass(t, spelling, pinned, pinnedTransport(reader, pinned, nil), spelling)
	}
	// Given to crypto/tls as it is, a non-ASCII name is never verified.
	server := startServer(t, false, p.pinned, p.intermediate)
	_, err := tls.Dial("tcp", server.Listener.Addr().String(),
		reader.TLSConfig(&tls.Config{RootCAs: p.roots, ServerName: "api\u3002example\u3002com"}))
	var hostname x509.HostnameError
	if !errors.As(err, &hostname) {
		t.Fatalf("a non-ASCII server name: %v", err)
	}
}
