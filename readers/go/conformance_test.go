package pinkeeper

import (
	"errors"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"pinkeeper.local/reader/internal/conformance"
	"pinkeeper.local/reader/internal/testfiles"
)

// The shared table Tests/Conformance/cases.json, answered by this reader (internal/conformance
// reads it; its README says how a runner plays a case): every case's verdict and error code,
// every host spelling, and the error codes themselves.

const conformanceStore = "banking"

func TestConformance(t *testing.T) {
	table := conformance.Load(t)
	for _, c := range table.Cases {
		c := c
		t.Run(c.ID, func(t *testing.T) { playConformanceCase(t, &c) })
	}
}

func TestConformanceHostSpellings(t *testing.T) {
	for _, spelling := range conformance.Load(t).HostSpellings {
		host, ok := CanonicalHost(spelling.Spelling)
		switch {
		case spelling.Host == nil && ok:
			t.Errorf("%s: %q became %q, the table refuses it", spelling.ID, spelling.Spelling, host)
		case spelling.Host != nil && (!ok || host != *spelling.Host):
			t.Errorf("%s: %q became %q (%v), the table says %q", spelling.ID, spelling.Spelling, host, ok, *spelling.Host)
		}
	}
}

// The codes this reader reports are exactly the table's, each of the table's kind and status.
func TestConformanceErrorCodes(t *testing.T) {
	table := conformance.Load(t)
	var ours, theirs []string
	for _, code := range ErrorCodes() {
		ours = append(ours, string(code))
		expected, listed := table.ErrorCodes[string(code)]
		kind := map[ErrorKind]string{Unreadable: "unreadable", Invalid: "invalid"}[code.Kind()]
		if listed && (expected.Kind != kind || expected.Status != code.ExitStatus()) {
			t.Errorf("%s: %s %d, the table says %s %d", code, kind, code.ExitStatus(), expected.Kind, expected.Status)
		}
	}
	for code := range table.ErrorCodes {
		theirs = append(theirs, code)
	}
	sort.Strings(ours)
	sort.Strings(theirs)
	if strings.Join(ours, " ") != strings.Join(theirs, " ") {
		t.Fatalf("error codes %v, the table's %v", ours, theirs)
	}
}

// playConformanceCase plays one case in a directory of its own: the second answer (after a
// previous_cache) or the only one, then an explicit re-read's error; or, for expected "error",
// the error of Open.
func playConformanceCase(t *testing.T, c *conformance.Case) {
	directory := t.TempDir()
	store := conformanceStoreOf(t, c, directory)
	if err := os.Chmod(directory, conformance.Mode(t, c.DirectoryMode, 0o755)); err != nil {
		t.Fatal(err)
	}
	version := c.Version(t)
	if c.PreviousCache != nil {
		testfiles.Publish(t, directory, conformanceStore, c.PreviousCache)
		if c.PreviousCacheLinked {
			linkPreviousVersion(t, directory)
		}
	}
	// Opened before the version under test is written: an invalid first version is then a
	// refused update, not an error from Open.
	reader, err := Open(store)
	if c.Expected == "error" {
		expectCode(t, "Open", err, c.ExpectedError)
		return
	}
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
		testfiles.PublishWithMode(t, directory, conformanceStore, version, conformance.Mode(t, c.CacheMode, 0o644))
	}
	if got := askConformanceQuestion(t, reader, c).String(); got != c.Expected {
		t.Errorf("got %s, expected %s (%s)", got, c.Expected, c.Rule)
	}
	expectCode(t, "Refresh", reader.Refresh(), c.ExpectedError)
}

// linkPreviousVersion makes a hard link to the cache file, as a backup tool that links files does
// (previous_cache_linked).
func linkPreviousVersion(t *testing.T, directory string) {
	cache := filepath.Join(directory, conformanceStore+".json")
	if err := os.Link(cache, filepath.Join(directory, conformanceStore+"-backup.json")); err != nil {
		t.Fatal(err)
	}
}

// conformanceStoreOf is the case's store, its fallback file written (or named, when missing).
func conformanceStoreOf(t *testing.T, c *conformance.Case, directory string) Store {
	store := Store{ID: conformanceStore, CacheDirectory: directory}
	switch {
	case c.FallbackMissing:
		store.FallbackFile = filepath.Join(directory, "fallback.json")
	case c.Fallback != nil:
		store.FallbackFile = testfiles.WriteFile(t, filepath.Join(directory, "fallback.json"), c.Fallback)
		if err := os.Chmod(store.FallbackFile, conformance.Mode(t, c.FallbackMode, 0o644)); err != nil {
			t.Fatal(err)
		}
	}
	if c.ExpectedCommonNames != nil {
		store.ExpectedCommonNames = append([]string{}, *c.ExpectedCommonNames...)
	}
	return store
}

// expectCode: err is a *CacheError with the code (none when code is empty).
func expectCode(t *testing.T, what string, err error, code string) {
	t.Helper()
	var cacheError *CacheError
	switch {
	case code == "" && err != nil:
		t.Errorf("%s: %v, expected no error", what, err)
	case code != "" && !errors.As(err, &cacheError):
		t.Errorf("%s: %v, expected a *CacheError %s", what, err, code)
	case code != "" && (string(cacheError.Code) != code || cacheError.Kind != cacheError.Code.Kind()):
		t.Errorf("%s: code %s (%v), expected %s", what, cacheError.Code, err, code)
	}
}

// conformanceNames: H is question.name; N, when the case gives it, question.common_name.
func conformanceNames(c *conformance.Case) PeerNames {
	if c.Question.CommonName != nil {
		return HostAndCommonName(c.Question.Name, *c.Question.CommonName)
	}
	return Host(c.Question.Name)
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
