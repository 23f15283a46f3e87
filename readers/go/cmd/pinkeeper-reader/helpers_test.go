package main

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/pem"
	"math/big"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

var (
	keyOnce sync.Once
	testKey *ecdsa.PrivateKey
	serial  int64
)

// certificate is a self-signed certificate whose subject has the CN commonName (none when
// withCommonName is false); the command line checks pins, not signatures.
func certificate(t *testing.T, commonName string, withCommonName bool) *x509.Certificate {
	t.Helper()
	keyOnce.Do(func() {
		testKey, _ = ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	})
	serial++
	name := pkix.Name{Organization: []string{"pinkeeper tests " + big.NewInt(serial).String()}}
	if withCommonName {
		name.CommonName = commonName
	}
	template := &x509.Certificate{SerialNumber: big.NewInt(serial), Subject: name,
		NotBefore: time.Unix(1763683600, 0), NotAfter: time.Unix(1795219600, 0)}
	der, err := x509.CreateCertificate(rand.Reader, template, template, &testKey.PublicKey, testKey)
	if err != nil {
		t.Fatal(err)
	}
	parsed, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return parsed
}

func fingerprintOf(c *x509.Certificate) string {
	sum := sha256.Sum256(c.Raw)
	return base64.StdEncoding.EncodeToString(sum[:])
}

// writeChain writes certificates as one PEM file, leaf first.
func writeChain(t *testing.T, path string, chain ...*x509.Certificate) string {
	t.Helper()
	var data bytes.Buffer
	for _, c := range chain {
		_ = pem.Encode(&data, &pem.Block{Type: "CERTIFICATE", Bytes: c.Raw})
	}
	return writeFile(t, path, data.Bytes())
}

func writeFile(t *testing.T, path string, data []byte) string {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// publish replaces <directory>/banking.json as the daemon does: a new file renamed over it.
func publish(t *testing.T, directory string, data []byte) {
	t.Helper()
	temporary := writeFile(t, filepath.Join(directory, ".banking.json.tmp"), data)
	if err := os.Rename(temporary, filepath.Join(directory, "banking.json")); err != nil {
		t.Fatal(err)
	}
}

// cacheFile is a challenge-mode cache file of store banking with entries (JSON objects) and,
// when not empty, a domainsConfig member (JSON text).
func cacheFile(domainsConfig string, entries ...string) []byte {
	text := `{"fingerprints": [` + join(entries) + `],`
	if domainsConfig != "" {
		text += ` "domainsConfig": ` + domainsConfig + `,`
	}
	return []byte(text + ` "pinkeeper": {"format": 1, "store": "banking", "mode": "challenge", "source": "https://pins.example.com/list", "updated": 1763766400, "nextUpdate": 1764374800}}`)
}

func pinEntry(name, fingerprint string, depth int) string {
	return `{"name": "` + name + `", "fingerprint": "` + fingerprint + `", "expires": 4102444800, "depth": ` + big.NewInt(int64(depth)).String() + `}`
}

func join(parts []string) string {
	var out bytes.Buffer
	for index, part := range parts {
		if index > 0 {
			out.WriteString(", ")
		}
		out.WriteString(part)
	}
	return out.String()
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
