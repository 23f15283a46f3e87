package pinkeeper

import (
	"encoding/pem"
	"strings"
	"testing"

	"pinkeeper.local/reader/internal/testpki"
)

// der is one DER element with a short- or long-form length.
func der(tag byte, content ...[]byte) []byte {
	var body []byte
	for _, part := range content {
		body = append(body, part...)
	}
	length := len(body)
	switch {
	case length < 0x80:
		return append([]byte{tag, byte(length)}, body...)
	case length < 0x100:
		return append([]byte{tag, 0x81, byte(length)}, body...)
	default:
		return append([]byte{tag, 0x82, byte(length >> 8), byte(length)}, body...)
	}
}

var commonNameOID = []byte{0x06, 0x03, 0x55, 0x04, 0x03}

// attribute is an AttributeTypeAndValue: CN (or organisation when !cn) with a value of tag.
func attribute(cn bool, tag byte, value []byte) []byte {
	oid := commonNameOID
	if !cn {
		oid = []byte{0x06, 0x03, 0x55, 0x04, 0x0A}
	}
	return der(0x30, oid, der(tag, value))
}

func subject(relativeNames ...[]byte) []byte { return der(0x30, relativeNames...) }
func relative(attributes ...[]byte) []byte   { return der(0x31, attributes...) }

func TestTheMostSpecificCommonNameIsReadFromDER(t *testing.T) {
	utf8 := func(text string) []byte { return attribute(true, 0x0C, []byte(text)) }
	for _, c := range []struct {
		what    string
		subject []byte
		name    string
		ok      bool
	}{
		{"UTF8String", subject(relative(utf8("api.example.com"))), "api.example.com", true},
		{"the last CN", subject(relative(utf8("first.example")), relative(attribute(false, 0x0C, []byte("O"))),
			relative(utf8("last.example"))), "last.example", true},
		{"a multi-valued RDN in encoded order", subject(relative(utf8("zzz"), utf8("API.bank.com"))), "API.bank.com", true},
		{"BMPString", subject(relative(attribute(true, 0x1E, []byte{0, 'a', 0, 'p', 0, 'i', 0, 0}))), "api\x00", true},
		{"BMPString surrogate pair", subject(relative(attribute(true, 0x1E, []byte{0xD8, 0x3D, 0xDE, 0x00}))), "😀", true},
		{"BMPString lone surrogate", subject(relative(attribute(true, 0x1E, []byte{0xD8, 0x3D, 0, 'a'}))), "", false},
		{"BMPString odd length", subject(relative(attribute(true, 0x1E, []byte{0, 'a', 0}))), "", false},
		{"UniversalString", subject(relative(attribute(true, 0x1C, []byte{0, 0, 0, 'a', 0, 1, 0xF6, 0}))), "a😀", true},
		{"UniversalString beyond U+10FFFF", subject(relative(attribute(true, 0x1C, []byte{0, 0x11, 0, 0}))), "", false},
		{"T61String as Latin-1", subject(relative(attribute(true, 0x14, []byte("caf\xe9")))), "café", true},
		{"PrintableString byte by byte", subject(relative(attribute(true, 0x13, []byte("a\xe9")))), "aé", true},
		{"IA5String", subject(relative(attribute(true, 0x16, []byte("ia5.example")))), "ia5.example", true},
		{"VisibleString", subject(relative(attribute(true, 0x1A, []byte("visible.example")))), "visible.example", true},
		{"NumericString", subject(relative(attribute(true, 0x12, []byte("123")))), "123", true},
		{"invalid UTF-8 hides an earlier CN", subject(relative(utf8("good.example")), relative(attribute(true, 0x0C, []byte{0xff}))), "", false},
		{"an OCTET STRING", subject(relative(attribute(true, 0x04, []byte("x")))), "", false},
		{"no CN", subject(relative(attribute(false, 0x0C, []byte("org")))), "", false},
		{"an empty subject", subject(), "", false},
		{"not DER", []byte{0x30, 0x05, 0x31}, "", false},
	} {
		name, ok := commonNameOfSubject(c.subject)
		if name != c.name || ok != c.ok {
			t.Errorf("%s: %q %v, expected %q %v", c.what, name, ok, c.name, c.ok)
		}
	}
}

func TestCommonNameOfACertificateIsNotGosSubjectCommonName(t *testing.T) {
	p := thePKI(t)
	t61 := testpki.Issue(t, testpki.Spec{RawSubject: subject(relative(attribute(true, 0x14, []byte("caf\xe9.example"))))}, &p.intermediate)
	if name, ok := CommonName(t61.Certificate); !ok || name != "café.example" {
		t.Fatalf("CommonName: %q %v", name, ok)
	}
	if t61.Certificate.Subject.CommonName == "café.example" {
		t.Fatal("crypto/x509 now reads a T61String as Latin-1: CommonName could use Subject.CommonName")
	}
	if name, ok := CommonName(p.pinned.Certificate); !ok || name != testHost {
		t.Fatalf("CommonName: %q %v", name, ok)
	}
}

func TestCertificateFilesArePEMOrDER(t *testing.T) {
	p := thePKI(t)
	leaf, intermediate := p.pinned.Certificate.Raw, p.intermediate.Certificate.Raw
	block := func(kind string, data []byte) string {
		return string(pem.EncodeToMemory(&pem.Block{Type: kind, Bytes: data}))
	}
	for _, c := range []struct {
		what, data string
		count      int
		reason     string
	}{
		{"PEM chain with a key block", block("CERTIFICATE", leaf) + block("PRIVATE KEY", []byte{1}) + block("CERTIFICATE", intermediate), 2, ""},
		{"DER chain", string(leaf) + string(intermediate), 2, ""},
		{"DER leaf", string(leaf), 1, ""},
		{"empty", "", 0, "the input is empty"},
		{"text", "this is not a certificate\n", 0, "neither PEM nor DER"},
		{"no certificate block", block("PRIVATE KEY", []byte{1}), 0, "holds no CERTIFICATE block"},
		{"a broken block first", "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n" + block("CERTIFICATE", leaf), 0,
			"PEM block 1 is not a valid certificate"},
		{"invalid base64", "-----BEGIN CERTIFICATE-----\n*\n-----END CERTIFICATE-----\n", 0, "PEM block 1 is not valid base64"},
		{"no END line", block("CERTIFICATE", leaf)[:100], 0, "PEM block 1 has no END line"},
		{"trailing DER bytes", string(leaf) + "\x30\x03\x02\x01\x00", 0, "not DER X.509 certificates"},
	} {
		chain, err := ParseCertificates([]byte(c.data))
		if c.reason != "" {
			if err == nil || !strings.Contains(err.Error(), c.reason) {
				t.Errorf("%s: %v, expected %q", c.what, err, c.reason)
			}
			continue
		}
		if err != nil || len(chain) != c.count || string(chain[0].Raw) != string(leaf) {
			t.Errorf("%s: %d certificates, %v", c.what, len(chain), err)
		}
	}
}
