package main

import (
	"bytes"
	"crypto/x509"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"pinkeeper.local/reader/internal/conformance"
	"pinkeeper.local/reader/internal/testfiles"
	"pinkeeper.local/reader/internal/testpki"
)

// The command-line part of Tests/Conformance/cases.json through the built command (a copy whose
// clock the test sets): every options row, and every case's expected_command on the case's last
// files. (Tests/Conformance/play_commands.py asks pinkeeper validate the same questions.)
//
// A command reads the file once, so a case is played on its last version only (none after a
// previous_cache that is deleted). Questions the options cannot ask directly are translated:
//   - question.common_name: a certificate with that CN stands for the leaf, its fingerprint
//     replacing the question's in the case's files (--certificate);
//   - question.verified_chain: a chain file of as many certificates, each one's fingerprint
//     replacing the one at its position in the case's files;
//   - expected_common_names [] (no name at all): one empty --expected-common-name.

func TestEveryOptionsRowThroughTheCommandLine(t *testing.T) {
	table := conformance.Load(t)
	_, goCommand := binaries(t)
	directory := t.TempDir()
	testfiles.Publish(t, directory, table.OptionsCache.Store, table.OptionsCache.Cache)
	now := []string{"PINKEEPER_READER_TEST_NOW=" + strconv.FormatInt(table.OptionsCache.Now, 10)}
	for _, row := range table.Options {
		row := row
		t.Run(row.ID, func(t *testing.T) {
			args := append([]string{"validate", "--cache-directory", directory, "--store", table.OptionsCache.Store}, row.Args...)
			expectCommand(t, runProgram(t, now, goCommand, args...), row.ExpectedCommand)
		})
	}
}

func TestEveryConformanceCaseThroughTheCommandLine(t *testing.T) {
	table := conformance.Load(t)
	_, goCommand := binaries(t)
	for _, c := range table.Cases {
		c := c
		t.Run(c.ID, func(t *testing.T) { playThroughTheCommand(t, &c, goCommand) })
	}
}

// expectCommand: the status, and the word: the first of standard output's first line for a
// verdict (followed by the end of the line or ':'), else the one after "pinkeeper: " on standard
// error's first line (followed by ':').
func expectCommand(t *testing.T, got result, expected conformance.Command) {
	t.Helper()
	line, prefix := got.out, ""
	if got.status > 2 {
		line, prefix = got.errors, "pinkeeper: "
	}
	line = strings.SplitN(line, "\n", 2)[0]
	word := strings.SplitN(strings.TrimPrefix(line, prefix), ":", 2)[0]
	if got.status != expected.Status || !strings.HasPrefix(line, prefix) || word != expected.Word {
		t.Fatalf("status %d, word %q, expected %d %q\nstdout:\n%sstderr:\n%s", got.status, word, expected.Status,
			expected.Word, got.out, got.errors)
	}
}

// playThroughTheCommand writes the case's last files as the library's runner does and asks the
// case's question through the command line.
func playThroughTheCommand(t *testing.T, c *conformance.Case, goCommand string) {
	directory := t.TempDir()
	cacheDirectory := filepath.Join(directory, "cache")
	version, fallback := c.Version(t), append([]byte(nil), c.Fallback...)
	question := commandQuestion(t, c, directory, func(from, to string) {
		version = bytes.ReplaceAll(version, []byte(from), []byte(to))
		fallback = bytes.ReplaceAll(fallback, []byte(from), []byte(to))
	})
	if err := os.MkdirAll(cacheDirectory, 0o755); err != nil {
		t.Fatal(err)
	}
	if version != nil {
		testfiles.PublishWithMode(t, cacheDirectory, "banking", version, conformance.Mode(t, c.CacheMode, 0o644))
	}
	storeOptions := []string{"--cache-directory", cacheDirectory, "--store", "banking"}
	switch fallbackFile := filepath.Join(cacheDirectory, "fallback.json"); {
	case c.FallbackMissing:
		storeOptions = append(storeOptions, "--fallback-file", fallbackFile)
	case c.Fallback != nil:
		testfiles.WriteFile(t, fallbackFile, fallback)
		if err := os.Chmod(fallbackFile, conformance.Mode(t, c.FallbackMode, 0o644)); err != nil {
			t.Fatal(err)
		}
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
	if err := os.Chmod(cacheDirectory, conformance.Mode(t, c.DirectoryMode, 0o755)); err != nil {
		t.Fatal(err)
	}
	got := runProgram(t, []string{"PINKEEPER_READER_TEST_NOW=" + strconv.FormatInt(c.Now, 10)}, goCommand,
		append(append([]string{"validate"}, storeOptions...), question...)...)
	expectCommand(t, got, c.ExpectedCommand)
}

// commandQuestion is the options that ask the case's question; replace puts the fingerprints of
// certificates made for it in place of the case's.
func commandQuestion(t *testing.T, c *conformance.Case, directory string, replace func(from, to string)) []string {
	question := []string{"--name", c.Question.Name}
	switch {
	case c.Question.VerifiedChain != nil || c.Question.CommonName != nil:
		fingerprints := c.Question.VerifiedChain
		if fingerprints == nil {
			if c.Question.Depth() != 0 {
				t.Fatal("a common_name question at a depth cannot be translated")
			}
			fingerprints = []string{c.Question.Fingerprint}
		}
		chain := make([]*x509.Certificate, len(fingerprints))
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
		return append(question, "--certificate", writeChain(t, filepath.Join(directory, "chain.pem"), chain...))
	case c.Question.CertificatePEM != "":
		return append(question, "--certificate", testfiles.WriteFile(t, filepath.Join(directory, "leaf.pem"), []byte(c.Question.CertificatePEM)))
	}
	question = append(question, "--fingerprint", c.Question.Fingerprint)
	if c.Question.GivenDepth != nil {
		question = append(question, "--depth", strconv.FormatInt(*c.Question.GivenDepth, 10))
	}
	return question
}
