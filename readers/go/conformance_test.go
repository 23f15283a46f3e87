package pinkeeper

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"pinkeeper.local/reader/internal/conformance"
	"pinkeeper.local/reader/internal/testfiles"
)

// The shared table Tests/Conformance/cases.json, answered by this reader (internal/conformance
// reads it).

const conformanceStore = "banking"

// conformanceNames: H is question.name; N, when the case gives it, question.common_name.
func conformanceNames(c *conformance.Case) PeerNames {
	if c.Question.CommonName != nil {
		return HostAndCommonName(c.Question.Name, *c.Question.CommonName)
	}
	return Host(c.Question.Name)
}

func TestConformance(t *testing.T) {
	for _, c := range conformance.Load(t) {
		c := c
		t.Run(c.ID, func(t *testing.T) {
			if got := playConformanceCase(t, &c).String(); got != c.Expected {
				t.Errorf("%s: got %s, expected %s (%s)", c.ID, got, c.Expected, c.Rule)
			}
		})
	}
}

// playConformanceCase plays one case in a directory of its own and returns the second answer.
func playConformanceCase(t *testing.T, c *conformance.Case) Verdict {
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
	version := c.Version(t)
	if c.PreviousCache != nil {
		testfiles.Publish(t, directory, conformanceStore, c.PreviousCache)
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
		testfiles.Publish(t, directory, conformanceStore, version)
	}
	return askConformanceQuestion(t, reader, c)
}

func askConformanceQuestion(t *testing.T, reader *Reader, c *conformance.Case) Verdict {
	now := time.Unix(c.Now, 0)
	names := conformanceNames(c)
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
	return reader.Verdict(names, caseDigest(t, c.Question.Fingerprint), c.Question.Depth(), now)
}

func caseDigest(t *testing.T, text string) []byte {
	digest, ok := decodeDigest(text)
	if !ok {
		t.Fatalf("not the base64 of a SHA-256 digest in the case: %s", strconv.Quote(text))
	}
	return digest
}
