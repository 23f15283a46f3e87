package pinkeeper

import (
	"encoding/json"
	"strings"
	"testing"
)

func validList(fields string) string {
	return `{"fingerprints": [{"name": "api.example.com", "fingerprint": "` + b64(1) + `", "expires": 1` + fields + `}]}`
}

// Each refused document with the reason given for it. encoding/json accepts the ones marked.
func TestStrictJSONRefusals(t *testing.T) {
	deep := strings.Repeat("[", 512) + strings.Repeat("]", 512)
	for _, c := range []struct {
		document, reason string
		goAccepts        bool
	}{
		{"\xEF\xBB\xBF{}", "starts with a UTF-8 byte order mark", false},
		{"{\"a\": \"\xff\"}", "invalid UTF-8", true},
		{"{\"a\": \"\xed\xa0\x80\"}", "invalid UTF-8", true}, // an encoded surrogate
		{"{\"a\": \"\xc0\xaf\"}", "invalid UTF-8", true},     // overlong
		{`{"a": "\ud800"}`, "a lone surrogate escape", true},
		{`{"a": "\udc00\ud800"}`, "a lone surrogate escape", true},
		{`{"a": "\ud800\u0041"}`, "a lone surrogate escape", true},
		{"{\"a\": \"\x01\"}", "raw control character", false},
		{`{"a": "\x"}`, "invalid escape", false},
		{`{"a": 1,}`, "expected a member name", false},
		{`{"a": [1,]}`, "unexpected character", false},
		{`{"a": NaN}`, "unexpected character", false},
		{`{"a": -Infinity}`, "invalid number", false},
		{`{"a": 01}`, "expected ',' or '}'", false},
		{`{"a": 1.}`, "invalid number", false},
		{`{} {}`, "more data after the document", false},
		{`{}x`, "more data after the document", false},
		{``, "no document", false},
		{`{"a": [` + deep + `]}`, "nested deeper than 512 levels", true},
		{`{"a": tru}`, "unexpected character", false},
	} {
		_, err := parseStrictJSON([]byte(c.document))
		if list, ok := err.(*ListError); !ok || list.Code != CodeNotJSON || !strings.Contains(err.Error(), c.reason) {
			t.Errorf("%q: %v, expected %q (not-json)", c.document, err, c.reason)
		}
		var anything interface{}
		if accepted := json.Unmarshal([]byte(c.document), &anything) == nil; accepted != c.goAccepts {
			t.Errorf("%q: encoding/json accepts it: %v", c.document, accepted)
		}
	}
}

func TestStrictJSONAcceptsWhatTheOtherReadersAccept(t *testing.T) {
	deepest := `{"a": ` + strings.Repeat("[", 511) + strings.Repeat("]", 511) + `}` // 512 levels
	for _, document := range []string{
		deepest,
		`{"a": "\ud83d\ude00 \u00e9 \/ \b\f\n\r\t \" \\"}`,
		`{"a": -0, "b": 1e400, "c": -1.5E-3, "d": [true, false, null, {}, []]}`,
		`{"unknown": 1, "unknown": [2]}`, // a repeated member nobody reads
		" \t\r\n{}\n",
	} {
		if _, err := parseStrictJSON([]byte(document)); err != nil {
			t.Errorf("%q: %v", document, err)
		}
	}
	value, _ := parseStrictJSON([]byte(`{"a": "\ud83d\ude00\u0041"}`))
	if value.members["a"].text != "😀A" {
		t.Errorf("escapes: %q", value.members["a"].text)
	}
}

func TestListFieldsAreTypedStrictly(t *testing.T) {
	for _, c := range []struct{ document, reason string }{
		{`[]`, "the document is not an object"},
		{`{}`, "fingerprints is missing"},
		{`{"fingerprints": null}`, "fingerprints is null, expected an array"},
		{`{"fingerprints": [], "fingerprints": []}`, "fingerprints appears more than once"},
		{validList(`, "expires": 2`), "fingerprints[0].expires appears more than once"},
		{validList(`, "n\u0061me": "x"`), "fingerprints[0].name appears more than once"},
		{validList(`, "depth": -1`), "fingerprints[0].depth is negative"},
		{validList(`, "depth": 1.0`), "fingerprints[0].depth is not an integer"},
		{validList(`, "depth": 1e0`), "fingerprints[0].depth is not an integer"},
		{validList(`, "depth": 9223372036854775808`), "fingerprints[0].depth is not an integer"},
		{validList(`, "signature": 1`), "fingerprints[0].signature is not a string"},
		{validList(`, "signature": "a", "signature": null`), "fingerprints[0].signature appears more than once"},
		{validList(`, "key": 7`), "fingerprints[0].key is not a string"},
		{validList(`, "key": "a", "k\u0065y": "a"`), "fingerprints[0].key appears more than once"},
		{`{"fingerprints": [], "domainsConfig": {"sslPinningRequiredForUnlisted": true, "domains": [], "key": {}}}`,
			"domainsConfig.key is not a string"},
		{`{"fingerprints": [{"name": "a", "fingerprint": "` + b64(1)[:43] + `", "expires": 1}]}`,
			"fingerprints[0].fingerprint is not the base64"},
		{`{"fingerprints": [], "domainsConfig": {"sslPinningRequiredForUnlisted": 1, "domains": []}}`,
			"domainsConfig.sslPinningRequiredForUnlisted is not a boolean"},
	} {
		_, err := ParsePinList([]byte(c.document))
		if list, ok := err.(*ListError); !ok || list.Code != CodeInvalidContent || !strings.Contains(err.Error(), c.reason) {
			t.Errorf("%s: %v, expected %q (invalid-content)", c.document, err, c.reason)
		}
	}
	// Null where a member is optional, and members nobody knows (which may repeat), are fine.
	list, err := ParsePinList([]byte(validList(`, "depth": null, "signature": null, "key": null, "more": {"x": 1}, "more": 2`)))
	if err != nil || len(list.Pins) != 1 || list.Pins[0].Depth != 0 || list.Pins[0].Expires != 1 {
		t.Fatalf("null and unknown members: %+v %v", list, err)
	}
}

func TestFingerprintsAreStrictBase64OrHex(t *testing.T) {
	valid := b64(1)
	for text, ok := range map[string]bool{
		valid:                          true,
		valid[:42] + "F=":              true, // unused low bits are ignored, as by every reader
		valid[:43]:                     false,
		valid + "=":                    false,
		valid[:20] + "\n" + valid[21:]: false,
		strings.NewReplacer("+", "-", "/", "_").Replace(b64(0xfb)): false, // the URL-safe alphabet
		"AQEB" + strings.Repeat("_", 39) + "=":                     false,
	} {
		if _, got := decodeDigest(text); got != ok {
			t.Errorf("decodeDigest(%q) = %v", text, got)
		}
	}
	hexadecimal := strings.Repeat("01:", 31) + "01"
	if digest, ok := ParseFingerprint(hexadecimal); !ok || string(digest) != string(digestOf(1)) {
		t.Errorf("hex with colons: %v", ok)
	}
	for _, refused := range []string{strings.Repeat("0", 63), "010:1" + strings.Repeat("01", 30) + "1", hexadecimal + ":",
		":" + hexadecimal, strings.Repeat("0:1", 31) + "01", " " + strings.Repeat("01", 32), strings.Repeat("01:", 32)} {
		if _, ok := ParseFingerprint(refused); ok {
			t.Errorf("ParseFingerprint(%q) accepted", refused)
		}
	}
}
