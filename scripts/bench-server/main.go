// The pinning service for scripts/bench.sh's many-store rows: the normal answers of
// Tests/Fixtures/pinserver.py (a challenge-mode list signed over the client's challenge, or a
// static list of signed entries) from the same route files, over HTTPS with keep-alive. None of
// the fixture's misbehaviours, request log or HTTP listener: it answers benchmarks, not tests.
//
// Go rather than the Python fixture: one Python process answers about 900 requests a second on
// this machine when the load is high, so a pass of 1,000 stores at 64 at a time queued at the
// server, and the benchmark measured the server. HTTP/1.1 only, as the fixture: with HTTP/2
// libcurl would multiplex every store over one connection, another experiment.
//
// Usage: go run scripts/bench-server/main.go --routes DIR --cert PEM --key PEM --port-file FILE
// (scripts/bench.sh builds it so; there is no go.mod here)
package main

import (
	"bytes"
	"crypto"
	"crypto/ecdsa"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"
)

const challengeHeader = "X-Cert-Pinning-Challenge"
const signatureHeader = "X-Cert-Pinning-Signature"

// segment: the route names pinserver.py accepts (no "..", no hidden files).
var segment = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9._-]*$`)

// route is what a route file says, as far as the normal answers need it.
type route struct {
	Mode         string            `json:"mode"`
	SigningKey   string            `json:"signing_key"`
	Fingerprints []json.RawMessage `json:"fingerprints"`
	key          *ecdsa.PrivateKey
	staticBody   []byte // static mode: signed once, so every answer is the same bytes
}

type service struct {
	dir    string
	mutex  sync.Mutex
	routes map[string]*route // route files are read once: benchmarks do not change them
}

func main() {
	routes := flag.String("routes", "", "directory of NAME.json route files")
	cert := flag.String("cert", "", "server certificate (chain) PEM")
	keyFile := flag.String("key", "", "server private key PEM")
	portFile := flag.String("port-file", "", "where to write the HTTPS port once listening")
	flag.Parse()
	if *routes == "" || *cert == "" || *keyFile == "" || *portFile == "" {
		fmt.Fprintln(os.Stderr, "usage: bench-server --routes DIR --cert PEM --key PEM --port-file FILE")
		os.Exit(2)
	}
	pair, err := tls.LoadX509KeyPair(*cert, *keyFile)
	check(err)
	listener, err := net.Listen("tcp", "127.0.0.1:0")
	check(err)
	s := &service{dir: *routes, routes: map[string]*route{}}
	server := &http.Server{
		Handler:   s,
		TLSConfig: &tls.Config{Certificates: []tls.Certificate{pair}},
		// An empty map turns HTTP/2 off: see above.
		TLSNextProto: map[string]func(*http.Server, *tls.Conn, http.Handler){},
		IdleTimeout:  10 * time.Minute,
	}
	port := listener.Addr().(*net.TCPAddr).Port
	check(writeAtomically(*portFile, strconv.Itoa(port)))
	check(server.ServeTLS(listener, "", ""))
}

func (s *service) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rt, err := s.route(r.URL.Path)
	if err != nil {
		reply(w, http.StatusNotFound, `{"code":"NOT_FOUND","message":"no route"}`)
		return
	}
	switch rt.Mode {
	case "static":
		w.Header().Set("Content-Type", "application/json")
		w.Write(rt.staticBody)
	default: // challenge, pinserver.py's default
		challenge := strings.Trim(r.Header.Get(challengeHeader), " \t")
		if !validChallenge(challenge) {
			reply(w, http.StatusForbidden, `{"code":"INVALID_CHALLENGE","message":"Invalid challenge header"}`)
			return
		}
		body := challengeBody(rt)
		signature, err := sign(rt.key, append([]byte(challenge+"&"), body...))
		if err != nil {
			reply(w, http.StatusInternalServerError, `{"code":"FIXTURE_ERROR","message":"cannot sign"}`)
			return
		}
		w.Header().Set(signatureHeader, signature)
		w.Header().Set("Content-Type", "application/json")
		w.Write(body)
	}
}

func reply(w http.ResponseWriter, status int, body string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write([]byte(body))
}

// route loads DIR/<path>.json once, with its signing key (and, for a static list, its body).
func (s *service) route(path string) (*route, error) {
	s.mutex.Lock()
	defer s.mutex.Unlock()
	if rt, ok := s.routes[path]; ok {
		return rt, nil
	}
	parts := strings.Split(strings.Trim(path, "/"), "/")
	for _, part := range parts {
		if !segment.MatchString(part) {
			return nil, errors.New("bad route name")
		}
	}
	text, err := os.ReadFile(filepath.Join(append([]string{s.dir}, parts...)...) + ".json")
	if err != nil {
		return nil, err
	}
	rt := &route{Mode: "challenge"}
	if err := json.Unmarshal(text, rt); err != nil {
		return nil, err
	}
	keyPath := rt.SigningKey
	if !filepath.IsAbs(keyPath) {
		keyPath = filepath.Join(s.dir, keyPath)
	}
	if rt.key, err = loadKey(keyPath); err != nil {
		return nil, err
	}
	if rt.Mode == "static" {
		if rt.staticBody, err = staticBody(rt); err != nil {
			return nil, err
		}
	}
	s.routes[path] = rt
	return rt, nil
}

// challengeBody: the Mobile Utility Server's answer, timestamp first, entries as the route gives them.
func challengeBody(rt *route) []byte {
	var body bytes.Buffer
	fmt.Fprintf(&body, `{"timestamp":%d,"fingerprints":[`, time.Now().Unix())
	for i, entry := range rt.Fingerprints {
		if i > 0 {
			body.WriteByte(',')
		}
		json.Compact(&body, entry)
	}
	body.WriteString("]}")
	return body.Bytes()
}

// staticBody signs each entry over name&fingerprint&expires (docs/protocol.md §3).
func staticBody(rt *route) ([]byte, error) {
	var body bytes.Buffer
	body.WriteString(`{"fingerprints":[`)
	for i, raw := range rt.Fingerprints {
		var entry struct {
			Name        string `json:"name"`
			Fingerprint string `json:"fingerprint"`
			Expires     int64  `json:"expires"`
			Signature   string `json:"signature,omitempty"`
		}
		if err := json.Unmarshal(raw, &entry); err != nil {
			return nil, err
		}
		if entry.Signature == "" {
			fingerprint := entry.Fingerprint // re-encoded when it decodes, as pinserver.py signs it
			if raw, err := base64.StdEncoding.DecodeString(fingerprint); err == nil {
				fingerprint = base64.StdEncoding.EncodeToString(raw)
			}
			signed := fmt.Sprintf("%s&%s&%d", entry.Name, fingerprint, entry.Expires)
			var err error
			if entry.Signature, err = sign(rt.key, []byte(signed)); err != nil {
				return nil, err
			}
		}
		if i > 0 {
			body.WriteByte(',')
		}
		encoded, _ := json.Marshal(entry)
		body.Write(encoded)
	}
	body.WriteString("]}")
	return body.Bytes(), nil
}

// validChallenge: base64 (padding optional) of 16 to 32 bytes, as the Mobile Utility Server checks.
func validChallenge(value string) bool {
	raw, err := base64.RawStdEncoding.DecodeString(strings.TrimRight(value, "="))
	return err == nil && len(raw) >= 16 && len(raw) <= 32
}

// sign: ECDSA P-256 over SHA-256, DER, base64, as the fixture's `cryptography` signer.
func sign(key *ecdsa.PrivateKey, data []byte) (string, error) {
	digest := sha256.Sum256(data)
	der, err := key.Sign(rand.Reader, digest[:], crypto.SHA256)
	if err != nil {
		return "", err
	}
	return base64.StdEncoding.EncodeToString(der), nil
}

func loadKey(path string) (*ecdsa.PrivateKey, error) {
	text, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	block, _ := pem.Decode(text)
	if block == nil {
		return nil, errors.New(path + ": no PEM block")
	}
	if key, err := x509.ParseECPrivateKey(block.Bytes); err == nil {
		return key, nil
	}
	parsed, err := x509.ParsePKCS8PrivateKey(block.Bytes)
	if err != nil {
		return nil, err
	}
	key, ok := parsed.(*ecdsa.PrivateKey)
	if !ok {
		return nil, errors.New(path + ": not an EC key")
	}
	return key, nil
}

func writeAtomically(path, text string) error {
	temp := path + ".tmp"
	if err := os.WriteFile(temp, []byte(text), 0o644); err != nil {
		return err
	}
	return os.Rename(temp, path)
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench-server:", err)
		os.Exit(1)
	}
}
