package main

import (
	"bytes"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	pinkeeper "pinkeeper.local/reader"
	"pinkeeper.local/reader/internal/conformance"
	"pinkeeper.local/reader/internal/testfiles"
	"pinkeeper.local/reader/internal/testpki"
)

// Every case of Tests/Conformance/cases.json through the command line, at the case's time: the
// built command (a copy whose clock the test sets) against the case's answer and, when
// $PINKEEPER_BINARY names the Swift `pinkeeper`, against `pinkeeper validate` on the same files
// (run under faketime, frozen at the case's time).
//
// A command reads the file once, so a case is played on its last version only (none after a
// previous_cache that is deleted). Questions the options cannot ask directly are translated:
//   - question.common_name: a certificate with that CN stands for the leaf, its fingerprint
//     replacing the question's in the case's files (--certificate);
//   - question.verified_chain: a chain file of as many certificates, each one's fingerprint
//     replacing the one at its position in the case's files;
//   - expected_common_names [] (no name at all): --expected-common-name with an empty value,
//     which admits no host (the command cannot give an empty list otherwise); in the Swift
//     configuration, expected_common_names = [].

var verdictStatus = map[string]int{"trusted": 0, "untrusted": 1, "empty": 2}

func TestEveryConformanceCaseThroughTheCommandLine(t *testing.T) {
	cases := conformance.Load(t)
	_, goCommand := binaries(t)
	swift := swiftCommand(t)
	compared := 0
	for _, c := range cases {
		c := c
		t.Run(c.ID, func(t *testing.T) {
			if playThroughCommands(t, &c, goCommand, swift) {
				compared++
			}
		})
	}
	if swift != nil {
		t.Logf("%d of %d cases compared with pinkeeper validate", compared, len(cases))
		if compared < len(cases)*3/4 {
			t.Fatalf("only %d of %d cases could be compared with pinkeeper validate", compared, len(cases))
		}
	}
}

// swiftCommand runs `pinkeeper validate` at a given time; nil without $PINKEEPER_BINARY.
type swiftRunner func(t *testing.T, now int64, args ...string) result

func swiftCommand(t *testing.T) swiftRunner {
	binary := os.Getenv("PINKEEPER_BINARY")
	if binary == "" {
		t.Log("PINKEEPER_BINARY is not set: the command line is not compared with pinkeeper validate (make test-go sets it)")
		return nil
	}
	if _, err := os.Stat(binary); err != nil {
		t.Fatalf("PINKEEPER_BINARY=%s: %v", binary, err)
	}
	faketime, err := exec.LookPath("faketime")
	if err != nil {
		t.Fatal("faketime is missing (Debian's faketime; make test-go installs it): pinkeeper validate has no option for the time")
	}
	return func(t *testing.T, now int64, args ...string) result {
		// Frozen (not started) at the case's time, the monotonic clock left alone.
		arguments := append([]string{"-m", "--exclude-monotonic", "-f", strconv.FormatInt(now, 10), binary, "validate"}, args...)
		for attempt := 1; ; attempt++ {
			got := runProgram(t, []string{"FAKETIME_FMT=%s"}, faketime, arguments...)
			if !fakeTimeDidNotStart(got) || attempt == 3 {
				return got
			}
		}
	}
}

// fakeTimeDidNotStart: the faketime wrapper names its semaphore after its own PID and stops
// (status 1, "sem_open: File exists", pinkeeper not run) when a wrapper that died without
// cleaning up had that PID. The next wrapper has another PID. (Preloading libfaketime without
// the wrapper is no way out: the library then calls setenv before Swift finds its arguments
// behind the environment, and pinkeeper sees none.)
func fakeTimeDidNotStart(got result) bool {
	return got.status == 1 && got.out == "" && strings.Contains(got.errors, "sem_open: File exists")
}

// playThroughCommands plays c; whether pinkeeper validate was compared.
func playThroughCommands(t *testing.T, c *conformance.Case, goCommand string, swift swiftRunner) bool {
	directory := t.TempDir()
	cacheDirectory := filepath.Join(directory, "cache")
	version := c.Version(t) // the case's last version: the file the command reads
	var fallback []byte = c.Fallback

	question := []string{"--name", c.Question.Name}
	replace := func(from string, to string) {
		version = bytes.ReplaceAll(version, []byte(from), []byte(to))
		fallback = bytes.ReplaceAll(fallback, []byte(from), []byte(to))
	}
	switch {
	case c.Question.VerifiedChain != nil || c.Question.CommonName != nil:
		fingerprints := c.Question.VerifiedChain
		if fingerprints == nil {
			if c.Question.Depth() != 0 {
				t.Fatal("a common_name question at a depth cannot be translated")
			}
			fingerprints = []string{c.Question.Fingerprint}
		}
		var chain = make([]*x509.Certificate, len(fingerprints))
		for index, fingerprint := range fingerprints {
			leafName := ""
			if index == 0 && c.Question.CommonName != nil {
				leafName = *c.Question.CommonName
			}
			chain[index] = certificate(t, leafName)
			for earlier := 0; earlier < index; earlier++ {
				if fingerprints[earlier] == fingerprint {
					t.Fatal("a chain that holds one fingerprint twice cannot be translated")
				}
			}
			replace(fingerprint, testpki.Fingerprint(chain[index]))
		}
		question = append(question, "--certificate", writeChain(t, filepath.Join(directory, "chain.pem"), chain...))
	case c.Question.CertificatePEM != "":
		question = append(question, "--certificate", testfiles.WriteFile(t, filepath.Join(directory, "leaf.pem"), []byte(c.Question.CertificatePEM)))
	default:
		question = append(question, "--fingerprint", c.Question.Fingerprint)
		if c.Question.GivenDepth != nil {
			question = append(question, "--depth", strconv.FormatInt(*c.Question.GivenDepth, 10))
		}
	}
	if err := os.MkdirAll(cacheDirectory, 0o755); err != nil {
		t.Fatal(err)
	}
	if version != nil {
		testfiles.Publish(t, cacheDirectory, "banking", version)
	}
	storeOptions := []string{"--cache-directory", cacheDirectory, "--store", "banking"}
	fallbackFile := ""
	if fallback != nil {
		fallbackFile = testfiles.WriteFile(t, filepath.Join(directory, "fallback.json"), fallback)
		storeOptions = append(storeOptions, "--fallback-file", fallbackFile)
	}
	if names := c.ExpectedCommonNames; names != nil {
		for _, name := range *names {
			storeOptions = append(storeOptions, "--expected-common-name="+name)
		}
		if len(*names) == 0 {
			storeOptions = append(storeOptions, "--expected-common-name=")
		}
	}

	got := runProgram(t, []string{"PINKEEPER_READER_TEST_NOW=" + strconv.FormatInt(c.Now, 10)}, goCommand,
		append(append([]string{"validate"}, storeOptions...), question...)...)
	checkAgainstTheCase(t, c, got, version)

	if swift == nil {
		return false
	}
	if !comparableWithSwift(t, version) {
		t.Log("not compared with pinkeeper validate: it reads this file in the configured mode, keys reconciled")
		return false
	}
	config := testfiles.WriteFile(t, filepath.Join(directory, "pinkeeper.toml"), swiftConfiguration(directory, cacheDirectory, fallbackFile, c.ExpectedCommonNames))
	expected := swift(t, c.Now, append([]string{"--config", config, "--store", "banking"}, question...)...)
	if got.status != expected.status {
		t.Fatalf("exit status %d, pinkeeper validate %d\n%s%s\npinkeeper validate:\n%s%s", got.status, expected.status, got.out, got.errors, expected.out, expected.errors)
	}
	if got.status <= 2 && (lastLine(got.out) != lastLine(expected.out) || notes(got.out) != notes(expected.out)) {
		t.Fatalf("output differs from pinkeeper validate:\n%s\npinkeeper validate:\n%s%s", got.out, expected.out, expected.errors)
	}
	return true
}

// checkAgainstTheCase: an answer must be the case's; a command that answers nothing must have
// a reason the library's answer does not have (an empty host, a version it refuses).
func checkAgainstTheCase(t *testing.T, c *conformance.Case, got result, version []byte) {
	t.Helper()
	if got.status <= 2 {
		if got.status != verdictStatus[c.Expected] {
			t.Fatalf("answered %q (status %d), the case expects %s", got.out, got.status, c.Expected)
		}
		return
	}
	switch {
	case got.status == 64 && c.Question.Name == "":
	case got.status == 65 && version != nil && invalid(version):
	default:
		t.Fatalf("status %d: %s", got.status, got.errors)
	}
}

// invalid: a version the reader refuses (another store's file included).
func invalid(version []byte) bool {
	cache, err := pinkeeper.ParseCacheFile(version)
	return err != nil || cache.Metadata.Store != "banking"
}

// comparableWithSwift: pinkeeper validate reads the file as the configuration vouches for it
// (docs/readers.md): it sets the configured mode (challenge here) and drops pins and a
// domainsConfig of keys the configuration does not list. A valid file is compared only when
// that changes nothing: no mode but "challenge" and no key member. (Static and unknown modes
// are compared by the library's table alone; the Swift reader also refuses a file whose mode it
// does not know or whose key is not a string, where the Go, Python and Java readers read it.)
func comparableWithSwift(t *testing.T, version []byte) bool {
	if version == nil || invalid(version) {
		return true
	}
	var document struct {
		Fingerprints  []map[string]json.RawMessage `json:"fingerprints"`
		DomainsConfig map[string]json.RawMessage   `json:"domainsConfig"`
		Pinkeeper     struct {
			Mode *string `json:"mode"`
		} `json:"pinkeeper"`
	}
	if err := json.Unmarshal(version, &document); err != nil {
		t.Fatalf("a valid file that encoding/json cannot read: %v", err)
	}
	if document.Pinkeeper.Mode != nil && *document.Pinkeeper.Mode != "challenge" {
		return false
	}
	if _, keyed := document.DomainsConfig["key"]; keyed {
		return false
	}
	for _, entry := range document.Fingerprints {
		if _, keyed := entry["key"]; keyed {
			return false
		}
	}
	return true
}

func swiftConfiguration(directory, cacheDirectory, fallbackFile string, expected *[]string) []byte {
	text := "cache_directory = " + tomlString(cacheDirectory) + "\nstate_directory = " + tomlString(filepath.Join(directory, "state")) +
		"\n[stores.banking]\nurl = \"https://pins.example.com/list\"\n" +
		"public_key = \"BC3kV9OIDnMuVoCdDR9nEA/JidJLTTDLuSA2TSZsGgODSshfbZg31MS90WC/HdbU/A5WL5GmyDkE/iks6INv+XE=\"\n"
	if fallbackFile != "" {
		text += "fallback_file = " + tomlString(fallbackFile) + "\n"
	}
	if expected != nil {
		var names []string
		for _, name := range *expected {
			names = append(names, tomlString(name))
		}
		text += "expected_common_names = [" + strings.Join(names, ", ") + "]\n"
	}
	return []byte(text)
}

// tomlString is a TOML basic string: quotes, backslashes and control characters escaped.
func tomlString(value string) string {
	var out strings.Builder
	out.WriteByte('"')
	for _, r := range value {
		switch {
		case r == '"' || r == '\\':
			out.WriteString(`\` + string(r))
		case r < 0x20 || r == 0x7F:
			fmt.Fprintf(&out, `\u%04X`, r)
		default:
			out.WriteRune(r)
		}
	}
	return out.String() + `"`
}

func lastLine(text string) string {
	lines := strings.Split(strings.TrimSpace(text), "\n")
	return lines[len(lines)-1]
}

// notes are the output's note lines (the leaf's CN differing from --name).
func notes(text string) string {
	var found []string
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(line, "note: ") {
			found = append(found, line)
		}
	}
	return strings.Join(found, "\n")
}
