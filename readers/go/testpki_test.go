package pinkeeper

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/json"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// A PKI made at test time: authorities and leaves with ECDSA P-256 keys.

type issued struct {
	certificate *x509.Certificate
	key         *ecdsa.PrivateKey
}

// certificateSpec says what to issue; a leaf unless isCA.
type certificateSpec struct {
	commonName string
	dnsNames   []string
	ips        []net.IP
	isCA       bool
	rawSubject []byte // instead of commonName, when set
}

var serialNumber int64

func issue(t *testing.T, spec certificateSpec, issuer *issued) issued {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	serialNumber++
	template := &x509.Certificate{
		SerialNumber:          big.NewInt(serialNumber),
		Subject:               pkix.Name{CommonName: spec.commonName, Organization: []string{"pinkeeper tests"}},
		RawSubject:            spec.rawSubject,
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		DNSNames:              spec.dnsNames,
		IPAddresses:           spec.ips,
		BasicConstraintsValid: true,
		IsCA:                  spec.isCA,
	}
	if spec.isCA {
		template.KeyUsage = x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature
	} else {
		template.KeyUsage = x509.KeyUsageDigitalSignature
		template.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}
	}
	parent, signer := template, key
	if issuer != nil {
		parent, signer = issuer.certificate, issuer.key
	}
	der, err := x509.CreateCertificate(rand.Reader, template, parent, &key.PublicKey, signer)
	if err != nil {
		t.Fatal(err)
	}
	certificate, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return issued{certificate, key}
}

func (i issued) fingerprint() string {
	sum := sha256.Sum256(i.certificate.Raw)
	return base64.StdEncoding.EncodeToString(sum[:])
}

// testEntry is one entry of a cache file written by a test.
type testEntry struct {
	Name        string `json:"name"`
	Fingerprint string `json:"fingerprint"`
	Expires     int64  `json:"expires"`
	Depth       int64  `json:"depth,omitempty"`
}

func entry(name, fingerprint string) testEntry {
	return testEntry{Name: name, Fingerprint: fingerprint, Expires: farFuture}
}

const farFuture = 4102444800 // 2100-01-01

// cacheDocument is a challenge-mode cache file of store, with domainsConfig when not nil.
func cacheDocument(t *testing.T, store string, domainsConfig map[string]interface{}, entries ...testEntry) []byte {
	t.Helper()
	if entries == nil {
		entries = []testEntry{}
	}
	document := map[string]interface{}{
		"fingerprints": entries,
		"pinkeeper": map[string]interface{}{"format": 1, "store": store, "mode": "challenge",
			"source": "https://pins.example.com/list", "updated": 1763766400, "nextUpdate": 1764374800},
	}
	if domainsConfig != nil {
		document["domainsConfig"] = domainsConfig
	}
	data, err := json.Marshal(document)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// newStore publishes a cache file in a new directory and opens a reader on it.
func newStore(t *testing.T, document []byte) (*Reader, string) {
	t.Helper()
	directory := t.TempDir()
	publish(t, directory, "banking", document)
	reader, err := Open(Store{ID: "banking", CacheDirectory: directory})
	if err != nil {
		t.Fatal(err)
	}
	return reader, directory
}

func writeFile(t *testing.T, path string, data []byte) string {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}
