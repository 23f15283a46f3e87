// Package testfiles writes the files the tests of the reader and of its command line read:
// cache files as the daemon publishes them, fallback files, certificates.
package testfiles

import (
	"os"
	"path/filepath"
	"testing"
)

// WriteFile writes data at path, making its directory, and returns path.
func WriteFile(t testing.TB, path string, data []byte) string {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// Publish replaces <directory>/<store>.json as the daemon does: a new file (mode 0644) renamed
// over it.
func Publish(t testing.TB, directory, store string, data []byte) {
	t.Helper()
	PublishWithMode(t, directory, store, data, 0o644)
}

// PublishWithMode is Publish with the file's mode set before the rename.
func PublishWithMode(t testing.TB, directory, store string, data []byte, mode os.FileMode) {
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
	if err := os.Chmod(temporary.Name(), mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(temporary.Name(), filepath.Join(directory, store+".json")); err != nil {
		t.Fatal(err)
	}
}
