package pinkeeper

import (
	"crypto/x509"
	"encoding/base64"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"pinkeeper.local/reader/internal/testfiles"
	"pinkeeper.local/reader/internal/testpki"
)

func digestOf(b byte) []byte {
	digest := make([]byte, 32)
	for index := range digest {
		digest[index] = b
	}
	return digest
}

func b64(b byte) string { return base64.StdEncoding.EncodeToString(digestOf(b)) }

var (
	at   = time.Unix(1763770000, 0)
	api  = Host("api.example.com")
	pin1 = digestOf(1)
)

// newStore publishes a cache file in a new directory and opens a reader on it.
func newStore(t *testing.T, document []byte) (*Reader, string) {
	t.Helper()
	directory := t.TempDir()
	testfiles.Publish(t, directory, "banking", document)
	reader, err := Open(Store{ID: "banking", CacheDirectory: directory})
	if err != nil {
		t.Fatal(err)
	}
	return reader, directory
}

func verdictOf(t *testing.T, reader *Reader, fingerprint []byte) Verdict {
	t.Helper()
	return reader.Verdict(api, fingerprint, 0, at)
}

func problemOf(reader *Reader) string {
	if problem := reader.Snapshot().Problem; problem != nil {
		return problem.Error()
	}
	return ""
}

func TestANewVersionIsReadAndAnInvalidOneKeepsTheLastGoodPins(t *testing.T) {
	reader, directory := newStore(t, testfiles.CacheDocument(t, "banking", nil, testfiles.Pin("api.example.com", b64(1), 0)))
	if verdictOf(t, reader, pin1) != Trusted {
		t.Fatal("the first version is not in use")
	}
	testfiles.Publish(t, directory, "banking", testfiles.CacheDocument(t, "banking", nil, testfiles.Pin("api.example.com", b64(2), 0)))
	if verdictOf(t, reader, pin1) != Untrusted || verdictOf(t, reader, digestOf(2)) != Trusted {
		t.Fatal("the second version is not in use")
	}
	for _, invalid := range []string{"not json", `{"fingerprints": []}`, string(testfiles.CacheDocument(t, "payments", nil))} {
		testfiles.Publish(t, directory, "banking", []byte(invalid))
		if verdictOf(t, reader, digestOf(2)) != Trusted {
			t.Fatalf("%q replaced the last good pins", invalid)
		}
		var cacheError *CacheError
		if !errors.As(reader.Refresh(), &cacheError) || cacheError.Kind != Invalid {
			t.Fatalf("%q: problem %v", invalid, reader.Refresh())
		}
	}
	if !strings.Contains(problemOf(reader), "belongs to store 'payments', not 'banking'") {
		t.Fatalf("problem: %s", problemOf(reader))
	}
	if err := os.Remove(filepath.Join(directory, "banking.json")); err != nil {
		t.Fatal(err)
	}
	if verdictOf(t, reader, digestOf(2)) != Empty || reader.Snapshot().Cache != nil || reader.Refresh() != nil {
		t.Fatal("a removed file still gives pins or a problem")
	}
}

func TestAnEditInPlaceIsNoticed(t *testing.T) {
	reader, directory := newStore(t, testfiles.CacheDocument(t, "banking", nil, testfiles.Pin("api.example.com", b64(1), 0)))
	path := filepath.Join(directory, "banking.json")
	if verdictOf(t, reader, pin1) != Trusted {
		t.Fatal("not trusted")
	}
	// Same inode; the size changes.
	testfiles.WriteFile(t, path, testfiles.CacheDocument(t, "banking", nil,
		testfiles.Pin("api.example.com", b64(2), 0), testfiles.Pin("www.example.com", b64(3), 0)))
	if verdictOf(t, reader, pin1) != Untrusted {
		t.Fatal("the edit was not noticed")
	}
}

func TestInvalidOrUnreadableAtOpenIsAnError(t *testing.T) {
	directory := t.TempDir()
	testfiles.WriteFile(t, filepath.Join(directory, "banking.json"), []byte("{"))
	_, err := Open(Store{ID: "banking", CacheDirectory: directory})
	var cacheError *CacheError
	if !errors.As(err, &cacheError) || cacheError.Kind != Invalid ||
		!strings.Contains(err.Error(), "is not a pinkeeper cache file: not valid JSON") {
		t.Fatalf("invalid file: %v", err)
	}
	empty := t.TempDir()
	if err := os.Mkdir(filepath.Join(empty, "banking.json"), 0o755); err != nil {
		t.Fatal(err)
	}
	_, err = Open(Store{ID: "banking", CacheDirectory: empty})
	if !errors.As(err, &cacheError) || cacheError.Kind != Unreadable || !strings.Contains(err.Error(), "is not a regular file") {
		t.Fatalf("directory: %v", err)
	}
	for _, id := range []string{"", "../banking", "a/b", ".hidden", strings.Repeat("x", 65)} {
		if _, err := Open(Store{ID: id, CacheDirectory: empty}); err == nil {
			t.Fatalf("store id %q accepted", id)
		}
	}
	reader, err := Open(Store{ID: "banking", CacheDirectory: t.TempDir()})
	if err != nil || reader.Verdict(api, pin1, 0, at) != Empty {
		t.Fatalf("a missing file is not an error, and has no pins: %v", err)
	}
}

func TestSymlinksAndFIFOsAreRefusedWithoutWaiting(t *testing.T) {
	directory := t.TempDir()
	target := testfiles.WriteFile(t, filepath.Join(t.TempDir(), "elsewhere.json"),
		testfiles.CacheDocument(t, "banking", nil, testfiles.Pin("api.example.com", b64(9), 0)))
	path := filepath.Join(directory, "banking.json")
	fifo := filepath.Join(directory, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	swap := func(planted string, symlink bool) {
		t.Helper()
		temporary := filepath.Join(directory, ".swap")
		var err error
		if symlink {
			err = os.Symlink(planted, temporary)
		} else {
			err = os.Link(planted, temporary) // the same FIFO under the cache file's name
		}
		if err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(temporary, path); err != nil {
			t.Fatal(err)
		}
	}

	swap(target, true)
	if _, err := Open(Store{ID: "banking", CacheDirectory: directory}); err == nil ||
		!strings.Contains(err.Error(), "is a symlink, which is never followed") {
		t.Fatalf("symlink at open: %v", err)
	}
	swap(fifo, false)
	started := time.Now()
	if _, err := Open(Store{ID: "banking", CacheDirectory: directory}); err == nil || !strings.Contains(err.Error(), "is not a regular file") {
		t.Fatalf("FIFO at open: %v", err)
	}

	testfiles.Publish(t, directory, "banking", testfiles.CacheDocument(t, "banking", nil, testfiles.Pin("api.example.com", b64(1), 0)))
	reader, err := Open(Store{ID: "banking", CacheDirectory: directory})
	if err != nil {
		t.Fatal(err)
	}
	swap(fifo, false)
	if verdictOf(t, reader, pin1) != Trusted || !strings.Contains(problemOf(reader), "is not a regular file") {
		t.Fatalf("FIFO later: the last good pins must stay (%s)", problemOf(reader))
	}
	swap(target, true)
	if verdictOf(t, reader, pin1) != Trusted || verdictOf(t, reader, digestOf(9)) != Untrusted ||
		!strings.Contains(problemOf(reader), "is a symlink") {
		t.Fatalf("symlink later: the link was followed or the last good pins dropped (%s)", problemOf(reader))
	}
	if elapsed := time.Since(started); elapsed > 2*time.Second {
		t.Fatalf("a FIFO was waited on: %v", elapsed)
	}
}

func TestFilesLargerThan64MiBAreRefused(t *testing.T) {
	reader, directory := newStore(t, testfiles.CacheDocument(t, "banking", nil, testfiles.Pin("api.example.com", b64(1), 0)))
	large := filepath.Join(directory, ".large")
	file, err := os.Create(large)
	if err != nil {
		t.Fatal(err)
	}
	if err := file.Truncate(MaximumFileSize + 1); err != nil { // sparse: nothing is written
		t.Fatal(err)
	}
	file.Close()
	if err := os.Rename(large, filepath.Join(directory, "banking.json")); err != nil {
		t.Fatal(err)
	}
	if verdictOf(t, reader, pin1) != Trusted || !strings.Contains(problemOf(reader), "is larger than 67108864 bytes") {
		t.Fatalf("problem: %s", problemOf(reader))
	}
}

func TestFallbackPinsAndExpectedNames(t *testing.T) {
	directory := t.TempDir()
	fallback := testfiles.WriteFile(t, filepath.Join(t.TempDir(), "fallback.json"),
		[]byte(`{"fingerprints": [{"name": "api.example.com", "fingerprint": "`+b64(4)+`", "expires": 4102444800}]}`))
	link := filepath.Join(t.TempDir(), "fallback-link.json")
	if err := os.Symlink(fallback, link); err != nil {
		t.Fatal(err)
	}
	// The operator's fallback file may be a symlink.
	reader, err := Open(Store{ID: "banking", CacheDirectory: directory, FallbackFile: link})
	if err != nil {
		t.Fatal(err)
	}
	if verdictOf(t, reader, digestOf(4)) != Trusted || len(reader.Snapshot().FallbackPins) != 1 {
		t.Fatal("fallback pin not used")
	}
	if _, err := Open(Store{ID: "banking", CacheDirectory: directory, FallbackFile: filepath.Join(directory, "none.json")}); err == nil {
		t.Fatal("a missing fallback file is an error")
	}

	for _, c := range []struct {
		expected []string
		names    PeerNames
		admits   bool
	}{
		{nil, api, true},
		{[]string{}, api, false}, // an empty list admits no name
		{[]string{"API.example.COM"}, api, true},
		{[]string{"www.example.com"}, api, false},
		{[]string{"www.example.com"}, HostAndCommonName("api.example.com", "WWW.example.com"), true},
		{nil, Host(""), false}, // no H: nothing admitted, whatever N is
		{nil, HostAndCommonName("", "api.example.com"), false},
	} {
		reader, err := Open(Store{ID: "banking", CacheDirectory: directory, FallbackFile: fallback, ExpectedCommonNames: c.expected})
		if err != nil {
			t.Fatal(err)
		}
		verdict := reader.Verdict(c.names, digestOf(4), 0, at)
		if reader.Admits(c.names) != c.admits || (verdict == Trusted) != c.admits {
			t.Fatalf("%v %v: admits %v, verdict %v", c.expected, c.names, reader.Admits(c.names), verdict)
		}
	}
}

// A question never waits for another's reading, and every answer comes from one whole version.
func TestConcurrentQuestionsDuringReplacements(t *testing.T) {
	reader, directory := newStore(t, testfiles.CacheDocument(t, "banking", nil,
		testfiles.Pin("api.example.com", b64(1), 0), testfiles.Pin("api.example.com", b64(2), 0)))
	var wait sync.WaitGroup
	stop := make(chan struct{})
	failures := make(chan string, 8)
	for worker := 0; worker < 4; worker++ {
		wait.Add(1)
		go func() {
			defer wait.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				// Every version pins 2; 1 and 3 take turns.
				if verdict := reader.Verdict(api, digestOf(2), 0, at); verdict != Trusted {
					failures <- verdict.String()
					return
				}
			}
		}()
	}
	for round := 0; round < 200; round++ {
		other := byte(1 + 2*(round%2))
		testfiles.Publish(t, directory, "banking", testfiles.CacheDocument(t, "banking", nil,
			testfiles.Pin("api.example.com", b64(other), 0), testfiles.Pin("api.example.com", b64(2), 0)))
	}
	close(stop)
	wait.Wait()
	// A last version of another size: an inode number freed by a replacement may come back
	// with the same size and modification time, within the file system's time granularity.
	testfiles.Publish(t, directory, "banking", testfiles.CacheDocument(t, "banking", nil,
		testfiles.Pin("api.example.com", b64(5), 0), testfiles.Pin("api.example.com", b64(2), 0), testfiles.Pin("www.example.com", b64(1), 0)))
	select {
	case failure := <-failures:
		t.Fatalf("an answer during a replacement: %s", failure)
	default:
	}
	if reader.Verdict(api, digestOf(5), 0, at) != Trusted {
		t.Fatal("the last version is not in use")
	}
}

func TestVerdictForVerifiedChainsMatchesADepthInAnyChain(t *testing.T) {
	p := thePKI(t)
	reader, _ := newStore(t, testfiles.CacheDocument(t, "banking", nil,
		testfiles.Pin("api.example.com", p.otherIntermediate.Fingerprint(), 1)))
	viaIntermediate := testpki.Issue(t, testpki.Spec{CommonName: testHost, DNSNames: []string{testHost}}, &p.otherIntermediate)
	first := []*x509.Certificate{viaIntermediate.Certificate, p.intermediate.Certificate, p.root.Certificate}
	second := []*x509.Certificate{viaIntermediate.Certificate, p.otherIntermediate.Certificate, p.root.Certificate}
	if got := reader.VerdictForVerifiedChains(api, [][]*x509.Certificate{first}, at); got != Untrusted {
		t.Fatalf("one chain without the pin: %v", got)
	}
	if got := reader.VerdictForVerifiedChains(api, [][]*x509.Certificate{first, second}, at); got != Trusted {
		t.Fatalf("the pin at depth 1 of the second chain: %v", got)
	}
	if got := reader.VerdictForVerifiedChains(api, [][]*x509.Certificate{first[:1]}, at); got != Empty {
		t.Fatalf("a leaf alone leaves the depth-1 pin beyond the chain: %v", got)
	}
}
