// Package conformance reads the shared table Tests/Conformance/cases.json (its README says how
// a runner plays a case) for the tests of the reader and of its command line.
// $PINKEEPER_CONFORMANCE_CASES names another file.
package conformance

import (
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

// Table is the whole document.
type Table struct {
	Format        int                  `json:"format"`
	ErrorCodes    map[string]ErrorCode `json:"error_codes"`
	HostSpellings []HostSpelling       `json:"host_spellings"`
	OptionsCache  OptionsCache         `json:"options_cache"`
	Options       []OptionCase         `json:"options"`
	Cases         []Case               `json:"cases"`
}

// ErrorCode is the kind of an error code and the exit status of validate for it.
type ErrorCode struct {
	Kind   string `json:"kind"`
	Status int    `json:"status"`
}

// HostSpelling is a name as a client hands it over and its one form (nil: refused).
type HostSpelling struct {
	ID       string  `json:"id"`
	Spelling string  `json:"spelling"`
	Host     *string `json:"host"`
}

// OptionsCache is the file the options cases run against, written as <dir>/<Store>.json.
type OptionsCache struct {
	Store string          `json:"store"`
	Now   int64           `json:"now"`
	Cache json.RawMessage `json:"cache"`
}

// OptionCase is a command line (after validate --cache-directory DIR) and its outcome.
type OptionCase struct {
	ID              string   `json:"id"`
	Args            []string `json:"args"`
	ExpectedCommand Command  `json:"expected_command"`
}

// Command is what validate prints and exits with: the status and the first word (of standard
// output for statuses 0–2, else after "pinkeeper: " on standard error's first line).
type Command struct {
	Status int    `json:"status"`
	Word   string `json:"word"`
}

// Case is one case; the documents are kept as the table writes them.
type Case struct {
	ID                  string          `json:"id"`
	Rule                string          `json:"rule"`
	Cache               json.RawMessage `json:"cache"`
	CacheText           *string         `json:"cache_text"`
	CacheBase64         *string         `json:"cache_base64"`
	PreviousCache       json.RawMessage `json:"previous_cache"`
	PreviousCacheLinked bool            `json:"previous_cache_linked"`
	CacheMode           string          `json:"cache_mode"`
	DirectoryMode       string          `json:"directory_mode"`
	Fallback            json.RawMessage `json:"fallback"`
	FallbackMode        string          `json:"fallback_mode"`
	FallbackMissing     bool            `json:"fallback_missing"`
	ExpectedCommonNames *[]string       `json:"expected_common_names"`
	Now                 int64           `json:"now"`
	Question            Question        `json:"question"`
	Expected            string          `json:"expected"`
	ExpectedError       string          `json:"expected_error"`
	ExpectedCommand     Command         `json:"expected_command"`
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

// Load reads the table: format 2, at least one case, no id twice in a section, every
// expected error a code of error_codes.
func Load(t testing.TB) *Table {
	t.Helper()
	data, err := os.ReadFile(file(t))
	if err != nil {
		t.Fatalf("the conformance table is missing: %v", err)
	}
	var table Table
	if err := json.Unmarshal(data, &table); err != nil {
		t.Fatalf("cases.json: %v", err)
	}
	if table.Format != 2 || len(table.Cases) == 0 || len(table.HostSpellings) == 0 || len(table.Options) == 0 {
		t.Fatalf("cases.json: format %d with %d cases, %d spellings, %d options", table.Format, len(table.Cases),
			len(table.HostSpellings), len(table.Options))
	}
	seen := map[string]bool{}
	for _, c := range table.Cases {
		if seen["case "+c.ID] {
			t.Fatalf("duplicate case id %s", c.ID)
		}
		seen["case "+c.ID] = true
		if _, known := table.ErrorCodes[c.ExpectedError]; c.ExpectedError != "" && !known {
			t.Fatalf("%s: expected_error %s is not among error_codes", c.ID, c.ExpectedError)
		}
	}
	for _, o := range table.Options {
		if seen["option "+o.ID] {
			t.Fatalf("duplicate options id %s", o.ID)
		}
		seen["option "+o.ID] = true
	}
	for _, h := range table.HostSpellings {
		if seen["spelling "+h.ID] {
			t.Fatalf("duplicate host_spellings id %s", h.ID)
		}
		seen["spelling "+h.ID] = true
	}
	return &table
}

// Mode is an octal mode of the table ("0644"), or otherwise when the table gives none.
func Mode(t testing.TB, text string, otherwise os.FileMode) os.FileMode {
	t.Helper()
	if text == "" {
		return otherwise
	}
	value, err := strconv.ParseUint(text, 8, 32)
	if err != nil {
		t.Fatalf("not an octal mode: %q", text)
	}
	mode := os.FileMode(value & 0o777)
	if value&0o1000 != 0 {
		mode |= os.ModeSticky
	}
	return mode
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
