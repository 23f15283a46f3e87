package pinkeeper

import (
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// The shared table Tests/Conformance/cases.json (its README says how a runner plays a case),
// answered by this reader. PINKEEPER_CONFORMANCE_CASES names another file.

const conformanceStore = "banking"

// conformanceCase is one case; the documents are kept as the table writes them.
type conformanceCase struct {
	ID                  string          `json:"id"`
	Rule                string          `json:"rule"`
	Cache               json.RawMessage `json:"cache"`
	CacheText           *string         `json:"cache_text"`
	CacheBase64         *string         `json:"cache_base64"`
	PreviousCache       json.RawMessage `json:"previous_cache"`
	Fallback            json.RawMessage `json:"fallback"`
	ExpectedCommonNames *[]string       `json:"expected_common_names"`
	Now                 int64           `json:"now"`
	Question            struct {
		Name           string   `json:"name"`
		CommonName     *string  `json:"common_name"`
		Fingerprint    string   `json:"fingerprint"`
		Depth          int64    `json:"depth"`
		VerifiedChain  []string `json:"verified_chain"`
		CertificatePEM string   `json:"certificate_pem"`
	} `json:"question"`
	Expected string `json:"expected"`
}

func conformanceCasesFile() string {
	if explicit := os.Getenv("PINKEEPER_CONFORMANCE_CASES"); explicit != "" {
		return explicit
	}
	return filepath.Join("..", "..", "Tests", "Conformance", "cases.json")
}

func loadConformanceCases(t *testing.T) []conformanceCase {
	t.Helper()
	data, err := os.ReadFile(conformanceCasesFile())
	if err != nil {
		t.Fatalf("the conformance table is missing: %v", err)
	}
	var table struct {
		Format int               `json:"format"`
		Cases  []conformanceCase `json:"cases"`
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

// version is the file the case's question is asked about (nil: none).
func (c *conformanceCase) version(t *testing.T) []byte {
	switch {
	case c.Cache != nil:
		return c.Cache
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

// names: H is question.name; N, when the case gives it, question.common_name.
func (c *conformanceCase) names() PeerNames {
	if c.Question.CommonName != nil {
		return HostAndCommonName(c.Question.Name, *c.Question.CommonName)
	}
	return Host(c.Question.Name)
}

// publish replaces <directory>/<store>.json as the daemon does: a new file renamed over it.
func publish(t *testing.T, directory, store string, data []byte) {
	t.Helper()
	temporary, err := os.CreateTemp(directory, "."+store+".json.tmp-")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := temporary.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := temporary.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(temporary.Name(), filepath.Join(directory, store+".json")); err != nil {
		t.Fatal(err)
	}
}

func TestConformance(t *testing.T) {
	for _, c := range loadConformanceCases(t) {
		c := c
		t.Run(c.ID, func(t *testing.T) {
			if got := playConformanceCase(t, &c).String(); got != c.Expected {
				t.Errorf("%s: got %s, expected %s (%s)", c.ID, got, c.Expected, c.Rule)
			}
		})
	}
}

// playConformanceCase plays one case in a directory of its own and returns the second answer.
func playConformanceCase(t *testing.T, c *conformanceCase) Verdict {
	directory := t.TempDir()
	store := Store{ID: conformanceStore, CacheDirectory: directory}
	if c.Fallback != nil {
		store.FallbackFile = filepath.Join(directory, "fallback.json")
		if err := os.WriteFile(store.FallbackFile, c.Fallback, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if c.ExpectedCommonNames != nil {
		store.ExpectedCommonNames = append([]string{}, *c.ExpectedCommonNames...)
	}
	version := c.version(t)
	if c.PreviousCache != nil {
		publish(t, directory, conformanceStore, c.PreviousCache)
	}
	// Opened before the version under test is written: an invalid first version is then a
	// refused update, not an error from Open.
	reader, err := Open(store)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	if c.PreviousCache != nil {
		askConformanceQuestion(t, reader, c)
		if version == nil {
			if err := os.Remove(filepath.Join(directory, conformanceStore+".json")); err != nil {
				t.Fatal(err)
			}
		}
	}
	if version != nil {
		publish(t, directory, conformanceStore, version)
	}
	return askConformanceQuestion(t, reader, c)
}

func askConformanceQuestion(t *testing.T, reader *Reader, c *conformanceCase) Verdict {
	now := time.Unix(c.Now, 0)
	names := c.names()
	switch {
	case c.Question.VerifiedChain != nil:
		var chain [][]byte
		for _, fingerprint := range c.Question.VerifiedChain {
			chain = append(chain, caseDigest(t, fingerprint))
		}
		return reader.VerdictForChainDigests(names, chain, now)
	case c.Question.CertificatePEM != "":
		chain, err := ParseCertificates([]byte(c.Question.CertificatePEM))
		if err != nil {
			t.Fatalf("certificate_pem: %v", err)
		}
		fingerprint := Fingerprint(chain[0])
		return reader.Verdict(names, fingerprint[:], 0, now)
	}
	return reader.Verdict(names, caseDigest(t, c.Question.Fingerprint), c.Question.Depth, now)
}

func caseDigest(t *testing.T, text string) []byte {
	digest, ok := decodeDigest(text)
	if !ok {
		t.Fatalf("not the base64 of a SHA-256 digest in the case: %s", strconv.Quote(text))
	}
	return digest
}
