package pinkeeper

import (
	"strings"
	"testing"
)

func TestNamesFoldASCIILettersOnly(t *testing.T) {
	for _, c := range []struct {
		a, b string
		same bool
	}{
		{"API.Example.COM", "api.example.com", true},
		{"\u212Aelvin.example", "kelvin.example", false}, // Kelvin sign: strings.EqualFold says equal
		{"\u0131nfo.example", "info.example", false},     // dotless ı
		{"ſtatic.example", "static.example", false},      // long s: strings.EqualFold says equal
		{"café.example", "cafe\u0301.example", false},    // no normalisation
		{"ÜBER.example", "über.example", false},          // non-ASCII letters keep their case
		{"api.example.com.", "api.example.com", false},   // a trailing dot makes another name
		{"", "", true},
	} {
		if got := SameName(c.a, c.b); got != c.same {
			t.Errorf("SameName(%q, %q) = %v", c.a, c.b, got)
		}
		if got := FoldName(c.a) == FoldName(c.b); got != c.same {
			t.Errorf("FoldName(%q) == FoldName(%q) is %v", c.a, c.b, got)
		}
	}
	if !strings.EqualFold("\u212Aelvin", "kelvin") {
		t.Fatal("the Kelvin case no longer shows why EqualFold is not used")
	}
}

func TestPeerNamesConsultHostThenADifferentCommonName(t *testing.T) {
	for _, c := range []struct {
		names     PeerNames
		keys      string
		described string
	}{
		{Host("API.example.com"), "api.example.com", "'API.example.com'"},
		{HostAndCommonName("api.example.com", "Api.Example.com"), "api.example.com", "'api.example.com'"},
		{HostAndCommonName("api.example.com", "*.example.com"), "api.example.com|*.example.com",
			"'api.example.com' (certificate common name '*.example.com')"},
		{HostAndCommonName("", "api.example.com"), "", "''"}, // no H: N is never consulted alone
		{HostAndCommonName("api.example.com", ""), "api.example.com|", "'api.example.com' (certificate common name '')"},
	} {
		if got := strings.Join(c.names.keys(), "|"); got != c.keys {
			t.Errorf("%+v: keys %q", c.names, got)
		}
		if got := c.names.Described(); got != c.described && c.names.host != "" {
			t.Errorf("%+v: described %q", c.names, got)
		}
	}
}

func TestEscapedAsTheSwiftCommandWritesNames(t *testing.T) {
	for input, expected := range map[string]string{
		"api.example.com":                   "api.example.com",
		"a\\b\n\r\t":                        `a\\b\n\r\t`,
		"api\u200e.example\u061c.com\u200f": `api\u{200e}.example\u{61c}.com\u{200f}`,
		"\x00\x1f\x7f\u0085\u2028\u2029":    `\u{0}\u{1f}\u{7f}\u{85}\u{2028}\u{2029}`,
		"\u202a\u202e\u2066\u2069 é \u212a": `\u{202a}\u{202e}\u{2066}\u{2069} é ` + "\u212a",
		"bad \xff byte":                     "bad \uFFFD byte",
	} {
		if got := Escaped(input); got != expected {
			t.Errorf("Escaped(%q) = %q, expected %q", input, got, expected)
		}
	}
}
