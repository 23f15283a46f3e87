package pinkeeper

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// CanonicalHost is H in its one form (docs/protocol.md, "H in one spelling"; the steps are those
// of Tests/Conformance/README.md, "One spelling, step by step"), and false when the name cannot
// be put in one form: then it is never looked up, and every question about it answers Untrusted.
//
//   - An IPv6 literal (with or without brackets) is written as RFC 5952 says, an address in
//     ::ffff:0:0/96 as ::ffff:a.b.c.d; a zone id is refused.
//   - An IPv4 literal must be four decimal parts without leading zeros; octal, hex, short or
//     padded forms are refused, as is any name that looks like one but is not.
//   - A DNS name loses one trailing dot and its ASCII capitals; a label holding other characters
//     becomes its Punycode A-label as written, without IDNA mapping or normalisation. Dots other
//     than "." (U+3002, U+FF0E, U+FF61) and empty labels are refused.
//
// The standard library is not used for this: net/netip accepts zones, net.IP.String writes
// mapped addresses as plain IPv4, and net.ParseIP accepts what inet_pton does not.
func CanonicalHost(name string) (string, bool) {
	switch {
	case name == "" || !utf8.ValidString(name):
		return "", false
	case name[0] == '[':
		if len(name) < 2 || name[len(name)-1] != ']' {
			return "", false
		}
		return canonicalIPv6(name[1 : len(name)-1])
	case strings.IndexByte(name, ':') >= 0:
		return canonicalIPv6(name)
	case looksLikeIPv4(name):
		if _, ok := parseIPv4(name); !ok {
			return "", false
		}
		return name, true
	}
	return canonicalDNSName(name)
}

// looksLikeIPv4: the last label (one trailing dot dropped) is all digits or starts with 0x, or
// the name holds only digits and dots. Such a name is an IPv4 literal or nothing.
func looksLikeIPv4(name string) bool {
	if strings.Trim(name, "0123456789.") == "" {
		return true
	}
	last := strings.TrimSuffix(name, ".")
	last = last[strings.LastIndexByte(last, '.')+1:]
	if strings.HasPrefix(last, "0x") || strings.HasPrefix(last, "0X") {
		return true
	}
	return last != "" && strings.Trim(last, "0123456789") == ""
}

// parseIPv4 reads exactly four decimal parts of 0 to 255, without leading zeros ("0" itself is
// fine): the only IPv4 spelling every resolver and TLS stack reads alike.
func parseIPv4(text string) ([4]byte, bool) {
	var address [4]byte
	parts := strings.Split(text, ".")
	if len(parts) != 4 {
		return address, false
	}
	for index, part := range parts {
		if part == "" || len(part) > 3 || (len(part) > 1 && part[0] == '0') || strings.Trim(part, "0123456789") != "" {
			return address, false
		}
		value, err := strconv.Atoi(part)
		if err != nil || value > 255 {
			return address, false
		}
		address[index] = byte(value)
	}
	return address, true
}

// canonicalDNSName: one trailing dot dropped, ASCII capitals lowered, non-ASCII labels as A-labels.
func canonicalDNSName(name string) (string, bool) {
	if strings.ContainsAny(name, "\u3002\uFF0E\uFF61") {
		return "", false // dots IDNA would map to ".": a name that means another one
	}
	name = FoldName(strings.TrimSuffix(name, "."))
	if name == "" {
		return "", false
	}
	labels := strings.Split(name, ".")
	for index, label := range labels {
		if label == "" {
			return "", false
		}
		if !isASCII(label) {
			encoded, ok := punycode(label)
			if !ok {
				return "", false
			}
			labels[index] = "xn--" + encoded
		}
	}
	return strings.Join(labels, "."), true
}

func isASCII(text string) bool {
	for index := 0; index < len(text); index++ {
		if text[index] >= 0x80 {
			return false
		}
	}
	return true
}
