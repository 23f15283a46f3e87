package testfiles

import (
	"encoding/json"
	"testing"
)

// FarFuture is an expiry no test reaches: 2100-01-01.
const FarFuture = 4102444800

// Entry is one entry of a cache file's fingerprints.
type Entry struct {
	Name        string `json:"name"`
	Fingerprint string `json:"fingerprint"`
	Expires     int64  `json:"expires"`
	Depth       int64  `json:"depth,omitempty"`
	Key         string `json:"key,omitempty"` // the signing key that verified it (docs/cache-format.md)
}

// Pin is an entry that pins fingerprint for name at depth (0: the leaf) until FarFuture.
func Pin(name, fingerprint string, depth int64) Entry {
	return Entry{Name: name, Fingerprint: fingerprint, Expires: FarFuture, Depth: depth}
}

// PinningRequiredOnlyFor is a domainsConfig that exempts every host but host.
func PinningRequiredOnlyFor(host string) map[string]interface{} {
	return map[string]interface{}{"sslPinningRequiredForUnlisted": false,
		"domains": []map[string]interface{}{{"name": host, "sslPinningRequired": true}}}
}

// CacheDocument is a challenge-mode cache file of store, with domainsConfig when not nil.
func CacheDocument(t testing.TB, store string, domainsConfig map[string]interface{}, entries ...Entry) []byte {
	t.Helper()
	if entries == nil {
		entries = []Entry{}
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
