package pinkeeper

import (
	"strings"
	"testing"
)

// Beyond the table's host_spellings (conformance_test.go): inet_pton's edges, RFC 5952's and
// RFC 3492's own examples.
func TestCanonicalHostEdges(t *testing.T) {
	for spelling, expected := range map[string]string{
		"1:2:3:4:5:6:7::":       "1:2:3:4:5:6:7:0", // "::" for one group: allowed, written 0
		"::2:3:4:5:6:7:8":       "0:2:3:4:5:6:7:8",
		"1::2:3:4:5:6:7:8":      "", // eight groups and "::"
		"1:2:3:4:5:6:7:8::":     "",
		"1:2:3:4:5:6:7:8:9":     "",
		"1:2:3:4:5:6:1.2.3.4":   "1:2:3:4:5:6:102:304",
		"1:2:3:4:5:6:7:1.2.3.4": "",
		"::1.2.3.4":             "::102:304", // IPv4-compatible: no dotted part in RFC 5952 output
		"::ffff:0:0":            "::ffff:0.0.0.0",
		"::fffe:1.2.3.4":        "::fffe:102:304",
		"1.2.3.4::":             "",
		"::1.2.3":               "",
		":1::":                  "",
		":::":                   "",
		"::":                    "::",
		"[]":                    "",
		"[":                     "",
		"[::1%25eth0]":          "",
		"2001:db8::+1":          "",
		"2001:db8::0x1":         "",
		"1:0:0:2:0:0:3:4":       "1::2:0:0:3:4", // RFC 5952 4.2.3: the first of two equal runs
		"0.0.0.0":               "0.0.0.0",
		"255.255.255.255":       "255.255.255.255",
		"1.2.3.4.5":             "",
		"1.2.3.-4":              "1.2.3.-4", // its last label is not digits: a DNS name
		"api.example.0X1":       "",
		"1.example":             "1.example",
		"ex\xffample.com":       "", // not UTF-8: no scalars to spell
		"Straße.example":        "xn--strae-oqa.example",
		"ÄPI.example":           "xn--pi-3fa.example", // Ä keeps its case: only ASCII folds
		"api.example\uFF61com":  "",
	} {
		got, ok := CanonicalHost(spelling)
		if ok != (expected != "") || got != expected {
			t.Errorf("CanonicalHost(%q) = %q, %v; expected %q", spelling, got, ok, expected)
		}
	}
}

// RFC 3492, 7.1: sample strings (the Punycode of each, as the RFC gives it, lower case where it
// has no upper-case letters in the input).
func TestPunycodeSamples(t *testing.T) {
	for _, sample := range [][2]string{
		{"\u0644\u064A\u0647\u0645\u0627\u0628\u062A\u0643\u0644\u0645\u0648\u0634\u0639\u0631\u0628\u064A\u061F",
			"egbpdaj6bu4bxfgehfvwxn"},
		{"\u4ED6\u4EEC\u4E3A\u4EC0\u4E48\u4E0D\u8BF4\u4E2D\u6587", "ihqwcrb4cv8a8dqg056pqjye"},
		{"Pro\u010Dprost\u011Bnemluv\u00ED\u010Desky", "Proprostnemluvesky-uyb24dma41a"},
		{"3\u5E74B\u7D44\u91D1\u516B\u5148\u751F", "3B-ww4c5e180e575a65lsy2b"},
		{"\u305D\u306E\u30B9\u30D4\u30FC\u30C9\u3067", "d9juau41awczczp"},
		{"-> $1.00 <-", "-> $1.00 <--"},
		{"b\u00FCcher", "bcher-kva"},
		{"\U0001F600", "e28h"},
	} {
		label, expected := sample[0], sample[1]
		if got, ok := punycode(label); !ok || got != expected {
			t.Errorf("punycode(%q) = %q, %v; expected %q", label, got, ok, expected)
		}
	}
}

// H is put in its one form where PeerNames are made: every question looks it up so.
func TestPeerNamesHoldHInItsOneForm(t *testing.T) {
	for given, keys := range map[string]string{
		"API.Example.COM.": "api.example.com", "[0:0:0:0:0:0:0:1]": "::1", "bücher.example": "xn--bcher-kva.example",
		"127.1": "", "api.example.com..": "", "": "",
	} {
		names := HostAndCommonName(given, "CN.example")
		if got := strings.Join(names.keys(), "|"); (keys == "" && got != "") || (keys != "" && got != keys+"|cn.example") {
			t.Errorf("%q: keys %q", given, got)
		}
		if canonical, ok := names.CanonicalHostName(); canonical != keys || ok != (keys != "") || names.HostName() != given {
			t.Errorf("%q: %q %v %q", given, canonical, ok, names.HostName())
		}
	}
}
