package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"pinkeeper.local/reader/internal/testfiles"
	"pinkeeper.local/reader/internal/testpki"
)

func digest(b byte) string { return base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{b}, 32)) }

// store is a cache directory with the store banking: api.example.com pinned to digest 1 (leaf)
// and digest 2 (depth 1).
func store(t *testing.T) string {
	directory := t.TempDir()
	testfiles.Publish(t, directory, "banking", testfiles.CacheDocument(t, "banking", nil,
		testfiles.Pin("api.example.com", digest(1), 0), testfiles.Pin("api.example.com", digest(2), 1)))
	return directory
}

func inProcess(t *testing.T, directory string, args ...string) result {
	t.Helper()
	var out, errors bytes.Buffer
	arguments := append([]string{"validate", "--cache-directory", directory, "--store", "banking"}, args...)
	status := run(arguments, &out, &errors, func() time.Time { return time.Unix(1763770000, 0) })
	return result{status, out.String(), errors.String()}
}

func expect(t *testing.T, got result, status int, out string) {
	t.Helper()
	if got.status != status || got.out != out {
		t.Fatalf("got %d %q (stderr %q), expected %d %q", got.status, got.out, got.errors, status, out)
	}
}

func TestTheThreeVerdictsAndTheirExitStatuses(t *testing.T) {
	directory := store(t)
	expect(t, inProcess(t, directory, "--name", "api.example.com", "--fingerprint", digest(1)), 0, "trusted\n")
	expect(t, inProcess(t, directory, "--name", "API.example.com", "--fingerprint", digest(3)), 1,
		"untrusted: store 'banking' pins 'API.example.com', but not this certificate\n")
	expect(t, inProcess(t, directory, "--name", "other.example.com", "--fingerprint", digest(1)), 2,
		"empty: store 'banking' has no valid pin for 'other.example.com'; reject, and run `pinkeeper update --store banking`\n")
	hex := strings.TrimSuffix(strings.Repeat("02:", 32), ":")
	expect(t, inProcess(t, directory, "--name", "api.example.com", "--fingerprint", hex, "--depth", "1"), 0, "trusted\n")
	expect(t, inProcess(t, directory, "--name=api.example.com", "--fingerprint="+digest(2)), 1,
		"untrusted: store 'banking' pins 'api.example.com', but not this certificate\n")
	expect(t, inProcess(t, directory, "--name", "api.example.com", "--fingerprint", digest(1), "--expected-common-name", "www.example.com"), 1,
		"untrusted: 'api.example.com' is not among the expected_common_names of store 'banking'\n")
	// Names are escaped as the Swift command escapes them.
	// A name with no one spelling is never looked up.
	expect(t, inProcess(t, directory, "--name", "127.0.0.01", "--fingerprint", digest(1)), 1, "untrusted: '127.0.0.01' "+
		"is not a host name in one spelling (docs/protocol.md), so no pin of store 'banking' can vouch for it: give the host "+
		"as clients connect to it (e.g. 127.0.0.1, ::1, api.example.com)\n")
	expect(t, inProcess(t, directory, "--name", "api\u200e.example\n.com", "--fingerprint", digest(1)), 2,
		"empty: store 'banking' has no valid pin for 'api\\u{200e}.example\\n.com'; reject, and run `pinkeeper update --store banking`\n")
}

func TestACertificateFileIsListedThenCheckedWithItsCommonName(t *testing.T) {
	directory := store(t)
	wildcard := certificate(t, "*.example.com")
	exempt := certificate(t, "unlisted.example")
	testfiles.Publish(t, directory, "banking", testfiles.CacheDocument(t, "banking", testfiles.PinningRequiredOnlyFor("api.example.com"),
		testfiles.Pin("api.example.com", digest(1), 0), testfiles.Pin("*.example.com", testpki.Fingerprint(wildcard), 0)))
	file := writeChain(t, filepath.Join(directory, "wildcard.pem"), wildcard)
	expires := wildcard.NotAfter.Unix()
	expect(t, inProcess(t, directory, "--name", "api.example.com", "--certificate", file), 0,
		"trusted\ndepth 0: CN=*.example.com,O="+wildcard.Subject.Organization[0]+"  sha256 "+testpki.Fingerprint(wildcard)+"  expires "+
			strconv.FormatInt(expires, 10)+" ("+time.Unix(expires, 0).UTC().Format(time.RFC3339)+")\n"+
			"note: the leaf's common name '*.example.com' differs from --name 'api.example.com': pins under either are compared, "+
			"and pinning is skipped only if domainsConfig exempts both\n")
	// With --fingerprint there is no certificate, so no CN: the host alone decides.
	expect(t, inProcess(t, directory, "--name", "api.example.com", "--fingerprint", testpki.Fingerprint(wildcard)), 1,
		"untrusted: store 'banking' pins 'api.example.com', but not this certificate\n")
	// The mis-issued certificate of "the host decides" (docs/protocol.md): for the required host, with an exempt CN.
	got := inProcess(t, directory, "--name", "api.example.com", "--certificate", writeChain(t, filepath.Join(directory, "exempt.pem"), exempt))
	if got.status != 1 || !strings.HasPrefix(got.out,
		"untrusted: store 'banking' pins 'api.example.com' (certificate common name 'unlisted.example'), but not this certificate\n") {
		t.Fatalf("the host decides: %+v", got)
	}
	// Without a certificate, H alone: exempt.
	expect(t, inProcess(t, directory, "--name", "unlisted.example", "--fingerprint", testpki.Fingerprint(exempt)), 0, "trusted\n")
	// A chain file: depth 1 is the second certificate.
	chain := writeChain(t, filepath.Join(directory, "chain.pem"), certificate(t, "api.example.com"), wildcard)
	testfiles.Publish(t, directory, "banking",
		testfiles.CacheDocument(t, "banking", nil, testfiles.Pin("api.example.com", testpki.Fingerprint(wildcard), 1)))
	if got := inProcess(t, directory, "--name", "api.example.com", "--certificate", chain); got.status != 0 {
		t.Fatalf("chain: %+v", got)
	}
}

func TestUsageErrorsExitWith64(t *testing.T) {
	directory := store(t)
	for _, args := range [][]string{
		{"--name", "api.example.com"},
		{"--name", "api.example.com", "--fingerprint", digest(1), "--certificate", "x.pem"},
		{"--name", "api.example.com", "--certificate", "x.pem", "--depth", "1"},
		{"--name", "api.example.com", "--fingerprint", digest(1), "--depth", "-1"},
		{"--name", "api.example.com", "--fingerprint", "AAAA"},
		{"--name", "api.example.com", "--fingerprint", digest(1), "--colour"},
		{"--name", "api.example.com", "--fingerprint"},
		{"--name", "", "--fingerprint", digest(1)},
		{"--fingerprint", digest(1)},
	} {
		got := inProcess(t, directory, args...)
		if got.status != 64 || got.out != "" || !strings.HasPrefix(got.errors, "pinkeeper: usage: ") {
			t.Errorf("%q: %+v", args, got)
		}
	}
	if got := inProcess(t, directory, "--name", "", "--fingerprint", digest(1)); !strings.HasPrefix(got.errors,
		"pinkeeper: usage: --name must be the host a client connects to, not empty\n") {
		t.Errorf("empty name: %q", got.errors)
	}
	var out, errors bytes.Buffer
	for _, args := range [][]string{{"status"}, {}, {"validate", "--store", "../etc/passwd", "--name", "a", "--fingerprint", digest(1)}} {
		if status := run(args, &out, &errors, time.Now); status != 64 {
			t.Errorf("%q: %d", args, status)
		}
	}
	out.Reset()
	if status := run([]string{"validate", "--help"}, &out, &errors, time.Now); status != 0 || !strings.HasPrefix(out.String(), "usage: ") {
		t.Errorf("--help: %d %q", status, out.String())
	}
}

// The file names the key that verified each pin, not the keys still configured: a pin of a key the
// operator has since removed decides here until the daemon rewrites the file without it.
func TestHelpSaysPinsOfARemovedKeyStillCountAndTheyDo(t *testing.T) {
	directory := t.TempDir()
	kept, removed := testfiles.Pin("api.example.com", digest(1), 0), testfiles.Pin("api.example.com", digest(3), 0)
	kept.Key, removed.Key = "3f1c0c6a9b2e4d71", "0123456789abcdef"
	testfiles.Publish(t, directory, "banking", testfiles.CacheDocument(t, "banking", nil, kept, removed))
	for _, entry := range []testfiles.Entry{kept, removed} {
		expect(t, inProcess(t, directory, "--name", "api.example.com", "--fingerprint", entry.Fingerprint), 0, "trusted\n")
	}
	for _, asked := range [][]string{{"--help"}, {"validate", "--help"}} {
		var out, errors bytes.Buffer
		status := run(asked, &out, &errors, time.Now)
		text := strings.Join(strings.Fields(out.String()), " ")
		if status != 0 || !strings.Contains(text, "Reads no configuration: after a signing key is removed from the daemon's "+
			"configuration, its pins and its domainsConfig still decide here until the daemon drops them from the file") ||
			!strings.Contains(text, "`pinkeeper validate` without --cache-directory counts only what the configured keys vouch for") {
			t.Errorf("%q: %d %q", asked, status, out.String())
		}
	}
}

func TestUnusableFilesExitWith65_66And74(t *testing.T) {
	directory := store(t)
	expectStatus := func(status int, contains string, args ...string) {
		t.Helper()
		got := inProcess(t, directory, args...)
		if got.status != status || !strings.Contains(got.errors, contains) {
			t.Fatalf("%q: %+v, expected %d with %q", args, got, status, contains)
		}
	}
	expectStatus(66, "does not exist", "--name", "api.example.com", "--certificate", filepath.Join(directory, "missing.pem"))
	expectStatus(66, "cannot be read", "--name", "api.example.com", "--certificate", directory)
	garbage := testfiles.WriteFile(t, filepath.Join(directory, "garbage.pem"),
		[]byte("-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n"))
	expectStatus(65, "PEM block 1 is not a valid certificate", "--name", "api.example.com", "--certificate", garbage)
	text := testfiles.WriteFile(t, filepath.Join(directory, "text.pem"), []byte("this is not a certificate\n"))
	expectStatus(65, "neither PEM nor DER", "--name", "api.example.com", "--certificate", text)
	testfiles.Publish(t, directory, "banking", []byte("not json"))
	expectStatus(65, "pinkeeper: not-json: store 'banking': "+filepath.Join(directory, "banking.json")+
		" is not a pinkeeper cache file: not valid JSON",
		"--name", "api.example.com", "--fingerprint", digest(1))
	fallback := testfiles.WriteFile(t, filepath.Join(directory, "fallback.json"), []byte(`{"fingerprints": 1}`))
	os.Remove(filepath.Join(directory, "banking.json"))
	expectStatus(65, "pinkeeper: invalid-content: store 'banking': "+fallback+" is not a Wultra fingerprint list",
		"--name", "api.example.com", "--fingerprint", digest(1), "--fallback-file", fallback)
	missing := filepath.Join(directory, "missing-fallback.json")
	expectStatus(74, "pinkeeper: missing: store 'banking': "+missing+" does not exist",
		"--name", "api.example.com", "--fingerprint", digest(1), "--fallback-file", missing)
	if err := os.Chmod(fallback, 0o602); err != nil {
		t.Fatal(err)
	}
	expectStatus(74, "pinkeeper: insecure-permissions: store 'banking': "+fallback+" is writable by every user (mode 0602)",
		"--name", "api.example.com", "--fingerprint", digest(1), "--fallback-file", fallback)
	if err := os.Mkdir(filepath.Join(directory, "banking.json"), 0o755); err != nil {
		t.Fatal(err)
	}
	expectStatus(74, "pinkeeper: not-regular-file: store 'banking': ", "--name", "api.example.com", "--fingerprint", digest(1))
	if err := os.Remove(filepath.Join(directory, "banking.json")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(t.TempDir(), "elsewhere.json"), filepath.Join(directory, "banking.json")); err != nil {
		t.Fatal(err)
	}
	expectStatus(74, "pinkeeper: symlink: store 'banking': "+filepath.Join(directory, "banking.json")+" is a symlink",
		"--name", "api.example.com", "--fingerprint", digest(1))
}

// The binary `make go-reader` builds: the same answers through exec, and its clock is the real
// one (the variable only the tests' copy reads is ignored).
func TestTheBuiltCommand(t *testing.T) {
	shipped, testClock := binaries(t)
	directory := t.TempDir()
	// Pinned until 2100: trusted now; expired at the time the variable would give.
	testfiles.Publish(t, directory, "banking", testfiles.CacheDocument(t, "banking", nil, testfiles.Pin("api.example.com", digest(1), 0)))
	args := []string{"validate", "--cache-directory", directory, "--store", "banking", "--name", "api.example.com", "--fingerprint", digest(1)}
	late := []string{"PINKEEPER_READER_TEST_NOW=4102444801"}
	if got := runProgram(t, late, shipped, args...); got.status != 0 || got.out != "trusted\n" {
		t.Fatalf("%s: %+v", shipped, got)
	}
	if got := runProgram(t, late, testClock, args...); got.status != 2 {
		t.Fatalf("the tests' copy does not take its time from the variable: %+v", got)
	}
	got := runProgram(t, nil, shipped, "validate", "--store", "banking")
	if got.status != 64 || !strings.Contains(got.errors, "usage: pinkeeper-reader validate") {
		t.Fatalf("usage: %+v", got)
	}
}

// Exit statuses of edge cases (the table's rows are in conformance_test.go).
func TestEdgeCaseStatuses(t *testing.T) {
	shipped, _ := binaries(t)
	directory := t.TempDir()
	cacheDirectory := filepath.Join(directory, "cache")
	leaf := certificate(t, "api.example.com")
	other := certificate(t, "other.example")
	testfiles.Publish(t, writeDirectory(t, cacheDirectory), "banking", testfiles.CacheDocument(t, "banking", nil,
		testfiles.Pin("api.example.com", testpki.Fingerprint(leaf), 0), testfiles.Pin("other.example", digest(3), 0)))
	files := map[string]string{
		"{leaf}":  writeChain(t, filepath.Join(directory, "leaf.pem"), leaf),
		"{chain}": writeChain(t, filepath.Join(directory, "chain.pem"), other, leaf),
		"{der}":   testfiles.WriteFile(t, filepath.Join(directory, "leaf.der"), append(append([]byte(nil), leaf.Raw...), other.Raw...)),
		"{garbage}": testfiles.WriteFile(t, filepath.Join(directory, "garbage.pem"),
			[]byte("-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n")),
		"{text}":    testfiles.WriteFile(t, filepath.Join(directory, "text.pem"), []byte("this is not a certificate\n")),
		"{missing}": filepath.Join(directory, "missing.pem"),
		"{dir}":     directory,
		"{hex}":     strings.ToLower(strings.ReplaceAll(fmt.Sprintf("% X", sha256.Sum256(leaf.Raw)), " ", "")),
	}
	for _, c := range []struct {
		args   []string
		status int
	}{
		{[]string{"--name", "api.example.com", "--certificate", "{leaf}"}, 0},
		{[]string{"--name", "api.example.com", "--certificate", "{chain}"}, 1}, // the leaf at depth 1, no pin there
		{[]string{"--name", "API.EXAMPLE.COM.", "--certificate", "{der}"}, 0},
		{[]string{"--name", "other.example", "--certificate", "{chain}"}, 1},
		{[]string{"--name", "api.example.com", "--fingerprint", "{hex}"}, 0},
		{[]string{"--name", "api.example.com", "--fingerprint", "{hex}", "--depth", "1"}, 2},
		{[]string{"--name", "nowhere.example", "--fingerprint", "{hex}"}, 2},
		{[]string{"--name", "api.example.com..", "--fingerprint", "{hex}"}, 1}, // no one spelling
		{[]string{"--name", "", "--fingerprint", "{hex}"}, 64},
		{[]string{"--name", "", "--certificate", "{leaf}"}, 64},
		{[]string{"--name", "api.example.com", "--name", "api.example.com", "--fingerprint", "{hex}"}, 64},
		{[]string{"--name", "api.example.com", "--certificate", ""}, 66},
		{[]string{"--name", "api.example.com", "--certificate", "{missing}"}, 66},
		{[]string{"--name", "api.example.com", "--certificate", "{dir}"}, 66},
		{[]string{"--name", "api.example.com", "--certificate", "{garbage}"}, 65},
		{[]string{"--name", "api.example.com", "--certificate", "{text}"}, 65},
		{[]string{"--name", "api.example.com", "--fingerprint", "AAAA"}, 64},
		{[]string{"--name", "api.example.com", "--certificate", "{leaf}", "--depth", "1"}, 64},
		{[]string{"--name", "api.example.com", "--fingerprint", "{hex}", "--certificate", "{leaf}"}, 64},
		{[]string{"--name", "api\u200e.example\u061c.com\u200f", "--fingerprint", "{hex}"}, 2},
	} {
		args := c.args
		for index, arg := range args {
			if file, ok := files[arg]; ok {
				args[index] = file
			}
		}
		got := runProgram(t, nil, shipped, append([]string{"validate", "--cache-directory", cacheDirectory, "--store", "banking"}, args...)...)
		if got.status != c.status {
			t.Errorf("%q: status %d, expected %d\n%s%s", args, got.status, c.status, got.out, got.errors)
		}
	}
}

func writeDirectory(t *testing.T, path string) string {
	if err := os.MkdirAll(path, 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}
