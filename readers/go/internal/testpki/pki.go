// Package testpki makes certificates at test time (ECDSA P-256) for the tests of the reader and
// of its command line.
package testpki

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"math/big"
	"net"
	"strconv"
	"sync/atomic"
	"testing"
	"time"
)

// Issued is a certificate and its private key.
type Issued struct {
	Certificate *x509.Certificate
	Key         *ecdsa.PrivateKey
}

// Spec says what to issue: a leaf unless IsCA.
type Spec struct {
	CommonName string // none when empty
	DNSNames   []string
	IPs        []net.IP
	IsCA       bool
	RawSubject []byte    // instead of CommonName, when set
	NotBefore  time.Time // zero: an hour ago
	NotAfter   time.Time // zero: a day from now
}

var serialNumber int64

// Issue signs spec with issuer's key, or makes it self-signed when issuer is nil. Every
// certificate gets its own serial number and organization, so no two subjects are the same.
func Issue(t testing.TB, spec Spec, issuer *Issued) Issued {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	serial := atomic.AddInt64(&serialNumber, 1)
	template := &x509.Certificate{
		SerialNumber: big.NewInt(serial),
		Subject: pkix.Name{CommonName: spec.CommonName,
			Organization: []string{"pinkeeper tests " + strconv.FormatInt(serial, 10)}},
		RawSubject:            spec.RawSubject,
		NotBefore:             spec.NotBefore,
		NotAfter:              spec.NotAfter,
		DNSNames:              spec.DNSNames,
		IPAddresses:           spec.IPs,
		BasicConstraintsValid: true,
		IsCA:                  spec.IsCA,
	}
	if template.NotBefore.IsZero() {
		template.NotBefore = time.Now().Add(-time.Hour)
	}
	if template.NotAfter.IsZero() {
		template.NotAfter = time.Now().Add(24 * time.Hour)
	}
	if spec.IsCA {
		template.KeyUsage = x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature
	} else {
		template.KeyUsage = x509.KeyUsageDigitalSignature
		template.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}
	}
	parent, signer := template, key
	if issuer != nil {
		parent, signer = issuer.Certificate, issuer.Key
	}
	der, err := x509.CreateCertificate(rand.Reader, template, parent, &key.PublicKey, signer)
	if err != nil {
		t.Fatal(err)
	}
	certificate, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return Issued{certificate, key}
}

// Fingerprint is the base64 of the SHA-256 digest of the certificate's DER, as pins write it.
func Fingerprint(certificate *x509.Certificate) string {
	sum := sha256.Sum256(certificate.Raw)
	return base64.StdEncoding.EncodeToString(sum[:])
}

// Fingerprint is the pin of i's certificate.
func (i Issued) Fingerprint() string { return Fingerprint(i.Certificate) }
