package pinkeeper

import (
	"bytes"
	"crypto/sha256"
	"crypto/x509"
	"encoding/asn1"
	"encoding/base64"
	"errors"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// Fingerprint is the raw SHA-256 of a certificate's DER bytes: what a Wultra list pins.
func Fingerprint(certificate *x509.Certificate) [32]byte { return sha256.Sum256(certificate.Raw) }

// CommonName is N, the subject's most specific common name: the last attribute of type 2.5.4.3 in
// DER order (a multi-valued RDN's values in their encoded order), as OpenSSL-based readers and
// Android's findMostSpecific("CN") take it. ok is false when the subject has none, or when that
// value is not a valid string of a type read here: then H decides alone (an earlier CN is not
// used instead). Read from the certificate's raw subject rather than Subject.CommonName, which
// keeps a T61String's bytes as they are and drops a BMPString's final NUL.
func CommonName(certificate *x509.Certificate) (string, bool) {
	return commonNameOfSubject(certificate.RawSubject)
}

type attributeTypeAndValue struct {
	Type  asn1.ObjectIdentifier
	Value asn1.RawValue
}

// relativeNameSET: encoding/asn1 reads a slice type whose name ends in SET as a SET OF, in the
// order encoded (never sorted again).
type relativeNameSET []attributeTypeAndValue

var commonNameType = asn1.ObjectIdentifier{2, 5, 4, 3}

func commonNameOfSubject(raw []byte) (string, bool) {
	var names []relativeNameSET
	if rest, err := asn1.Unmarshal(raw, &names); err != nil || len(rest) != 0 {
		return "", false
	}
	var found *asn1.RawValue
	for _, relative := range names {
		for index := range relative {
			if relative[index].Type.Equal(commonNameType) {
				found = &relative[index].Value
			}
		}
	}
	if found == nil || found.Class != asn1.ClassUniversal || found.IsCompound {
		return "", false
	}
	return decodeDirectoryString(found.Tag, found.Bytes)
}

// decodeDirectoryString is a value by its universal tag, as ASN1_STRING_to_UTF8 and the other
// readers decode it: UTF8String as UTF-8, BMPString as UTF-16BE, UniversalString as UTF-32BE, and
// the one-byte types (NumericString, PrintableString, T61String, IA5String, VisibleString) one
// character per byte, 0x00–0xFF (T61String is Latin-1 to OpenSSL too). Invalid values (bad UTF-8,
// a lone surrogate, beyond U+10FFFF, a length that is no multiple of the unit) and other types: none.
func decodeDirectoryString(tag int, value []byte) (string, bool) {
	switch tag {
	case asn1.TagUTF8String:
		if !utf8.Valid(value) {
			return "", false
		}
		return string(value), true
	case asn1.TagNumericString, asn1.TagPrintableString, asn1.TagT61String, asn1.TagIA5String, 26: // 26: VisibleString
		runes := make([]rune, len(value))
		for index, b := range value {
			runes[index] = rune(b)
		}
		return string(runes), true
	case asn1.TagBMPString:
		if len(value)%2 != 0 {
			return "", false
		}
		units := make([]uint16, len(value)/2)
		for index := range units {
			units[index] = uint16(value[2*index])<<8 | uint16(value[2*index+1])
		}
		for index := 0; index < len(units); index++ {
			switch {
			case units[index] >= 0xD800 && units[index] < 0xDC00 && index+1 < len(units) && units[index+1] >= 0xDC00 && units[index+1] <= 0xDFFF:
				index++
			case utf16.IsSurrogate(rune(units[index])):
				return "", false
			}
		}
		return string(utf16.Decode(units)), true
	case 28: // UniversalString
		if len(value)%4 != 0 {
			return "", false
		}
		var text strings.Builder
		for index := 0; index < len(value); index += 4 {
			scalar := uint32(value[index])<<24 | uint32(value[index+1])<<16 | uint32(value[index+2])<<8 | uint32(value[index+3])
			if scalar > utf8.MaxRune || (scalar >= 0xD800 && scalar <= 0xDFFF) {
				return "", false
			}
			text.WriteRune(rune(scalar))
		}
		return text.String(), true
	}
	return "", false
}

const (
	pemBegin = "-----BEGIN CERTIFICATE-----"
	pemEnd   = "-----END CERTIFICATE-----"
)

// ParseCertificates is every certificate in data, in file order (a chain is leaf first). PEM (any
// number of CERTIFICATE blocks; other blocks such as keys are skipped) or DER (one or several
// concatenated) is told from the content. A broken PEM block is an error, never skipped: the
// blocks after it would move up a position. A file is no verified chain: this is for operators'
// files and tests, never for what a server presents.
func ParseCertificates(data []byte) ([]*x509.Certificate, error) {
	if len(data) == 0 {
		return nil, errors.New("the input is empty")
	}
	if bytes.Contains(data, []byte("-----BEGIN ")) {
		return parsePEM(string(data))
	}
	if data[0] != 0x30 {
		return nil, errors.New("the input is neither PEM nor DER")
	}
	chain, err := x509.ParseCertificates(data)
	if err != nil {
		return nil, errors.New("not DER X.509 certificates: " + err.Error())
	}
	return chain, nil
}

func parsePEM(text string) ([]*x509.Certificate, error) {
	var chain []*x509.Certificate
	for {
		begin := strings.Index(text, pemBegin)
		if begin < 0 {
			break
		}
		block := "PEM block " + strconv.Itoa(len(chain)+1)
		text = text[begin+len(pemBegin):]
		end := strings.Index(text, pemEnd)
		if end < 0 {
			return nil, errors.New(block + " has no END line")
		}
		encoded := strings.Map(func(r rune) rune {
			if r == ' ' || r == '\t' || r == '\r' || r == '\n' {
				return -1
			}
			return r
		}, text[:end])
		text = text[end+len(pemEnd):]
		der, err := base64.StdEncoding.Strict().DecodeString(encoded)
		if err != nil {
			return nil, errors.New(block + " is not valid base64")
		}
		certificate, err := x509.ParseCertificate(der)
		if err != nil {
			return nil, errors.New(block + " is not a valid certificate: " + err.Error())
		}
		chain = append(chain, certificate)
	}
	if len(chain) == 0 {
		return nil, errors.New("the PEM input holds no CERTIFICATE block")
	}
	return chain, nil
}
