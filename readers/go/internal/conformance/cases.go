// Package conformance reads the shared table Tests/Conformance/cases.json (its README says how
// a runner plays a case) for the tests of the reader and of its command line.
// $PINKEEPER_CONFORMANCE_CASES names another file.
package conformance

import (
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// Case is one case; the documents are kept as the table writes them.
type Case struct {
	ID                  string          `json:"id"`
	Rule                string          `json:"rule"`
	Cache               json.RawMessage `json:"cache"`
	CacheText           *string         `json:"cache_text"`
	CacheBase64         *string         `json:"cache_base64"`
	PreviousCache       json.RawMessage `json:"previous_cache"`
	Fallback            json.RawMessage `json:"fallback"`
	ExpectedCommonNames *[]string       `json:"expected_common_names"`
	Now                 int64           `json:"now"`
	Question            Question        `json:"question"`
	Expected            string          `json:"expected"`
}

// Question is what a case asks: H (Name), N when given (CommonName) and the certificate.
type Question struct {
	Name           string   `json:"name"`
	CommonName     *string  `json:"common_name"`
	Fingerprint    string   `json:"fingerprint"`
	GivenDepth     *int64   `json:"depth"`
	VerifiedChain  []string `json:"verified_chain"`
	CertificatePEM string   `json:"certificate_pem"`
}

// Depth is the fingerprint's depth: 0 (the leaf) when the case gives none.
func (q *Question) Depth() int64 {
	if q.GivenDepth == nil {
		return 0
	}
	return *q.GivenDepth
}

// Load reads the table: format 1, at least one case, no id twice.
func Load(t testing.TB) []Case {
	t.Helper()
	data, err := os.ReadFile(file(t))
	if err != nil {
		t.Fatalf("the conformance table is missing: %v", err)
	}
	var table struct {
		Format int    `json:"format"`
		Cases  []Case `json:"cases"`
	}
	if err := json.Unmarshal(data, &table); err != nil {
		t.Fatalf("cases.json: %v", err)
	}
	if table.Format != 1 || len(table.Cases) == 0 {
		t.Fatalf("cases.json: format %d with %d cases", table.Format, len(table.Cases))
	}
	seen := map[string]bool{}
	for _, c := range table.Cases {
		if seen[c.ID] {
			t.Fatalf("duplicate case id %s", c.ID)
		}
		seen[c.ID] = true
	}
	return table.Cases
}

// file is $PINKEEPER_CONFORMANCE_CASES, else the repository's table, found from the module's
// root (the nearest folder above the test's own with a go.mod): tests run in their package's folder.
func file(t testing.TB) string {
	if explicit := os.Getenv("PINKEEPER_CONFORMANCE_CASES"); explicit != "" {
		return explicit
	}
	directory, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(directory, "go.mod")); err == nil {
			return filepath.Join(directory, "..", "..", "Tests", "Conformance", "cases.json")
		}
		parent := filepath.Dir(directory)
		if parent == directory {
			t.Fatal("no go.mod above the test's folder: cannot find Tests/Conformance/cases.json")
		}
		directory = parent
	}
}

// Version is the file the case's question is asked about (nil: none), a copy of the case's.
func (c *Case) Version(t testing.TB) []byte {
	t.Helper()
	switch {
	case c.Cache != nil:
		return append([]byte(nil), c.Cache...)
	case c.CacheText != nil:
		return []byte(*c.CacheText)
	case c.CacheBase64 != nil:
		data, err := base64.StdEncoding.DecodeString(*c.CacheBase64)
		if err != nil {
			t.Fatalf("%s: cache_base64: %v", c.ID, err)
		}
		return data
	}
	return nil
}
