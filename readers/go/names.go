package pinkeeper

import (
	"strconv"
	"strings"
)

// FoldName is a name as every pinkeeper reader compares names (docs/protocol.md): its Unicode
// scalars with A–Z folded to a–z and nothing else changed. Two names are the same name when their
// folds are equal. Not strings.EqualFold or strings.ToLower: both fold the Kelvin sign U+212A to
// "k" (and ToLower much more), which DNS never does. No normalisation either: "é" and "e" +
// U+0301 are two names. UTF-8 never uses an ASCII byte inside a longer sequence, so folding bytes
// is folding scalars.
func FoldName(name string) string {
	index := 0
	for index < len(name) && !isUpper(name[index]) {
		index++
	}
	if index == len(name) {
		return name
	}
	folded := []byte(name)
	for ; index < len(folded); index++ {
		if isUpper(folded[index]) {
			folded[index] |= 0x20
		}
	}
	return string(folded)
}

// SameName reports whether a and b are the same name (FoldName).
func SameName(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	for index := 0; index < len(a); index++ {
		x, y := a[index], b[index]
		if x != y && fold(x) != fold(y) {
			return false
		}
	}
	return true
}

func isUpper(c byte) bool { return c >= 'A' && c <= 'Z' }

func fold(c byte) byte {
	if isUpper(c) {
		return c | 0x20
	}
	return c
}

// PeerNames are the two names a TLS peer is judged by (docs/protocol.md, "the host decides").
// H, the host, is the name the client connected to and had its TLS stack verify the certificate
// for; it always takes part, in its one form (CanonicalHost), and an empty one, or one that has
// no one form, leaves nothing to decide by (every question then answers Untrusted). N, the leaf
// certificate's common name, is known only with the certificate: its holder chose it, so it can
// add pins to compare and match an expected name, but never lift a pinning requirement that H
// has, and it is never consulted alone. N is compared as it is (FoldName), never re-spelled.
type PeerNames struct {
	host          string // H as the client gave it
	canonical     string // H in its one form; "" when it has none
	commonName    string
	hasCommonName bool
}

// Host is H alone: a question without a certificate.
func Host(host string) PeerNames {
	// The one place where H is put in its one form: every question goes through here.
	canonical, _ := CanonicalHost(host)
	return PeerNames{host: host, canonical: canonical}
}

// HostAndCommonName is H with the leaf's common name N.
func HostAndCommonName(host, commonName string) PeerNames {
	names := Host(host)
	names.commonName, names.hasCommonName = commonName, true
	return names
}

// HostName is H as the client gave it.
func (n PeerNames) HostName() string { return n.host }

// CanonicalHostName is H in its one form, the name looked up; false when H is empty or has no
// one form (then every question answers Untrusted).
func (n PeerNames) CanonicalHostName() (string, bool) { return n.canonical, n.canonical != "" }

// CommonName is N, and whether there is one.
func (n PeerNames) CommonName() (string, bool) { return n.commonName, n.hasCommonName }

// keys are the folded names to consult: H's one form, then N unless it is the same name; none
// without H.
func (n PeerNames) keys() []string {
	if n.canonical == "" {
		return nil
	}
	host := FoldName(n.canonical)
	if !n.hasCommonName {
		return []string{host}
	}
	if common := FoldName(n.commonName); common != host {
		return []string{host, common}
	}
	return []string{host}
}

// Described is the peer for messages, escaped as the Swift command escapes names: 'host', or
// 'host' (certificate common name 'N') when N is another name.
func (n PeerNames) Described() string {
	host := "'" + Escaped(n.host) + "'"
	if !n.hasCommonName || SameName(n.host, n.commonName) {
		return host
	}
	return host + " (certificate common name '" + Escaped(n.commonName) + "')"
}

// Escaped is text safe in one line of a message or log, as the Swift command's LogText writes
// it: a backslash doubled, \n \r \t, and \u{hex} for the other C0 and C1 controls, DEL, the line
// and paragraph separators and the bidirectional marks, embeddings, overrides and isolates. A
// name comes from a certificate or a cache file and must not forge or hide text. Invalid UTF-8
// is written as U+FFFD.
func Escaped(text string) string {
	clean := true
	for _, r := range text {
		if r == '\uFFFD' || needsEscape(r) {
			clean = false
			break
		}
	}
	if clean {
		return text
	}
	var out strings.Builder
	for _, r := range text {
		switch {
		case r == '\\':
			out.WriteString(`\\`)
		case r == '\n':
			out.WriteString(`\n`)
		case r == '\r':
			out.WriteString(`\r`)
		case r == '\t':
			out.WriteString(`\t`)
		case needsEscape(r):
			out.WriteString(`\u{` + strconv.FormatInt(int64(r), 16) + `}`)
		default:
			out.WriteRune(r)
		}
	}
	return out.String()
}

func needsEscape(r rune) bool {
	return r <= 0x1F || r == '\\' || (r >= 0x7F && r <= 0x9F) || r == 0x061C || r == 0x200E || r == 0x200F ||
		r == 0x2028 || r == 0x2029 || (r >= 0x202A && r <= 0x202E) || (r >= 0x2066 && r <= 0x2069)
}
