package pinkeeper

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"strconv"
	"strings"
)

// Pin is one pinned certificate: the SHA-256 of its DER bytes, trusted for Name until Expires
// (Unix seconds), at Depth in the verified chain (0 = leaf, 1 = its issuer, ...).
type Pin struct {
	Name        string
	Fingerprint [32]byte
	Expires     int64
	Depth       int64
	key         string // FoldName(Name): pins are looked up by it
}

// NewPin is a pin with its lookup key; depth must be 0 or more.
func NewPin(name string, fingerprint [32]byte, expires, depth int64) Pin {
	return Pin{Name: name, Fingerprint: fingerprint, Expires: expires, Depth: depth, key: FoldName(name)}
}

// Expired is Wultra's rule: an entry is expired once Expires lies strictly in the past.
func (p Pin) Expired(now int64) bool { return p.Expires < now }

// Matches reports whether digest is the pinned fingerprint.
func (p Pin) Matches(digest []byte) bool { return bytes.Equal(p.Fingerprint[:], digest) }

func (p Pin) String() string {
	text := p.Name + " " + base64.StdEncoding.EncodeToString(p.Fingerprint[:]) + " expires " + strconv.FormatInt(p.Expires, 10)
	if p.Depth != 0 {
		text += " depth " + strconv.FormatInt(p.Depth, 10)
	}
	return text
}

// DomainsConfig is the 2026 domainsConfig object: which names need pinning at all.
type DomainsConfig struct {
	RequiredForUnlisted bool
	Domains             []Domain
}

// Domain is one entry of DomainsConfig.Domains.
type Domain struct {
	Name     string
	Required bool
}

// PinningRequired reports whether a peer known by name must match a pin: the first entry listing
// the name decides, any other name takes RequiredForUnlisted.
func (c *DomainsConfig) PinningRequired(name string) bool {
	for _, domain := range c.Domains {
		if SameName(domain.Name, name) {
			return domain.Required
		}
	}
	return c.RequiredForUnlisted
}

// pinningRequired: unless the list exempts every one of the peer's names (keys, H first).
func (c *DomainsConfig) pinningRequired(keys []string) bool {
	for _, key := range keys {
		if c.PinningRequired(key) {
			return true
		}
	}
	return false
}

// decodeDigest is 32 bytes from strict standard base64: 43 characters of the standard alphabet
// and one "=" (Go's decoder alone would skip newlines). The unused low bits of the last character
// are ignored, as every reader ignores them.
func decodeDigest(text string) ([]byte, bool) {
	if len(text) != 44 || text[43] != '=' {
		return nil, false
	}
	for index := 0; index < 43; index++ {
		c := text[index]
		if !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '+' || c == '/') {
			return nil, false
		}
	}
	digest, err := base64.StdEncoding.DecodeString(text)
	if err != nil || len(digest) != 32 {
		return nil, false
	}
	return digest, true
}

// ParseFingerprint is 32 bytes from standard base64 (44 characters, padded, as lists write
// fingerprints), or from 64 hex digits, plain or as 32 colon-separated pairs (as `openssl x509
// -fingerprint -sha256` prints it); ok is false for anything else (no other colons, no space).
func ParseFingerprint(text string) (digest []byte, ok bool) {
	if digest, ok = decodeDigest(text); ok {
		return digest, true
	}
	hexadecimal := text
	if len(text) == 32*3-1 {
		var pairs strings.Builder
		for index := 0; index < len(text); index += 3 {
			if index+2 < len(text) && text[index+2] != ':' {
				return nil, false
			}
			pairs.WriteString(text[index : index+2])
		}
		hexadecimal = pairs.String()
	}
	if len(hexadecimal) != 64 || strings.IndexByte(hexadecimal, ':') >= 0 {
		return nil, false
	}
	digest, err := hex.DecodeString(hexadecimal)
	return digest, err == nil
}
