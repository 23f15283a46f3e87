package main

import (
	"bytes"
	"crypto/x509"
	"encoding/pem"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"pinkeeper.local/reader/internal/testfiles"
	"pinkeeper.local/reader/internal/testpki"
)

// certificate is a self-signed certificate with the CN commonName (none when empty), valid
// around the conformance cases' times; the command line checks pins, not signatures.
func certificate(t *testing.T, commonName string) *x509.Certificate {
	t.Helper()
	return testpki.Issue(t, testpki.Spec{CommonName: commonName,
		NotBefore: time.Unix(1763683600, 0), NotAfter: time.Unix(1795219600, 0)}, nil).Certificate
}

// writeChain writes certificates as one PEM file, leaf first.
func writeChain(t *testing.T, path string, chain ...*x509.Certificate) string {
	t.Helper()
	var data bytes.Buffer
	for _, c := range chain {
		_ = pem.Encode(&data, &pem.Block{Type: "CERTIFICATE", Bytes: c.Raw})
	}
	return testfiles.WriteFile(t, path, data.Bytes())
}

var (
	buildOnce     sync.Once
	builtPaths    = map[string]string{}
	buildError    error
	workDirectory string // removed when the tests end
)

func TestMain(m *testing.M) {
	var err error
	if workDirectory, err = os.MkdirTemp("", "pinkeeper-reader-test-"); err != nil {
		panic(err)
	}
	status := m.Run()
	os.RemoveAll(workDirectory)
	os.Exit(status)
}

// binaries are the command as `make go-reader` builds it ($PINKEEPER_READER, else built here
// the same way) and a copy whose clock the tests set through PINKEEPER_READER_TEST_NOW.
func binaries(t *testing.T) (shipped, testClock string) {
	t.Helper()
	buildOnce.Do(func() {
		directory := workDirectory
		builtPaths["shipped"] = os.Getenv("PINKEEPER_READER")
		if builtPaths["shipped"] == "" {
			builtPaths["shipped"] = filepath.Join(directory, "pinkeeper-reader")
			if output, err := exec.Command("go", "build", "-trimpath", "-o", builtPaths["shipped"], ".").CombinedOutput(); err != nil {
				buildError = &buildFailure{output}
				return
			}
		}
		builtPaths["clock"] = filepath.Join(directory, "pinkeeper-reader-test-clock")
		if output, err := exec.Command("go", "build", "-trimpath", "-ldflags", "-X main.testClock=PINKEEPER_READER_TEST_NOW",
			"-o", builtPaths["clock"], ".").CombinedOutput(); err != nil {
			buildError = &buildFailure{output}
		}
	})
	if buildError != nil {
		t.Fatalf("building the command: %v", buildError)
	}
	return builtPaths["shipped"], builtPaths["clock"]
}

type buildFailure struct{ output []byte }

func (f *buildFailure) Error() string { return string(f.output) }

// result is what a run of a command gave.
type result struct {
	status      int
	out, errors string
}

func runProgram(t *testing.T, environment []string, program string, args ...string) result {
	t.Helper()
	command := exec.Command(program, args...)
	command.Env = append(os.Environ(), environment...)
	var out, errors bytes.Buffer
	command.Stdout, command.Stderr = &out, &errors
	err := command.Run()
	status := 0
	if exit, ok := err.(*exec.ExitError); ok {
		status = exit.ExitCode()
	} else if err != nil {
		t.Fatalf("%s: %v", program, err)
	}
	return result{status, out.String(), errors.String()}
}
