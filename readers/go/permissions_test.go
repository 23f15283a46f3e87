package pinkeeper

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"pinkeeper.local/reader/internal/testfiles"
)

// codeOf is the code of the reader's problem after an explicit re-read; "" for none.
func codeOf(t *testing.T, reader *Reader) ErrorCode {
	t.Helper()
	var cacheError *CacheError
	if err := reader.Refresh(); err != nil && !errors.As(err, &cacheError) {
		t.Fatalf("not a *CacheError: %v", err)
	} else if err == nil {
		return ""
	}
	return cacheError.Code
}

func chmod(t *testing.T, path string, mode os.FileMode) {
	t.Helper()
	if err := os.Chmod(path, mode); err != nil {
		t.Fatal(err)
	}
}

// A file others may write, or one in a directory they may write without the sticky bit, could
// hold anyone's pins: refused, with the last good pins kept, and read again once it is fixed.
func TestFilesOthersMayWriteAreRefused(t *testing.T) {
	reader, directory := newStore(t, testfiles.CacheDocument(t, "banking", nil, testfiles.Pin("api.example.com", b64(1), 0)))
	path := filepath.Join(directory, "banking.json")
	testfiles.PublishWithMode(t, directory, "banking", testfiles.CacheDocument(t, "banking", nil,
		testfiles.Pin("api.example.com", b64(2), 0)), 0o646)
	if verdictOf(t, reader, pin1) != Trusted || codeOf(t, reader) != CodeInsecurePermissions {
		t.Fatalf("a world-writable version: %s", problemOf(reader))
	}
	chmod(t, path, 0o664) // group-writable is the operator's business
	if verdictOf(t, reader, digestOf(2)) != Trusted || codeOf(t, reader) != "" {
		t.Fatalf("the fixed version is not read: %s", problemOf(reader))
	}
	// The directory is looked at on every read: an explicit re-read of the same version sees it.
	chmod(t, directory, 0o757)
	if codeOf(t, reader) != CodeInsecurePermissions || verdictOf(t, reader, digestOf(2)) != Trusted {
		t.Fatalf("a world-writable directory: %s", problemOf(reader))
	}
	chmod(t, directory, 0o777|os.ModeSticky)
	if codeOf(t, reader) != "" {
		t.Fatalf("a sticky directory: %s", problemOf(reader))
	}
}

// The fallback file may be a symlink: the directory of the file it names is checked too.
func TestAFallbackFileOthersMayReplaceIsRefused(t *testing.T) {
	document := testfiles.CacheDocument(t, "banking", nil, testfiles.Pin("api.example.com", b64(4), 0))
	open := func(fallback string) error {
		_, err := Open(Store{ID: "banking", CacheDirectory: t.TempDir(), FallbackFile: fallback})
		return err
	}
	shared := t.TempDir()
	target := testfiles.WriteFile(t, filepath.Join(shared, "fallback.json"), document)
	link := filepath.Join(t.TempDir(), "fallback.json")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	if err := open(link); err != nil {
		t.Fatalf("a symlinked fallback file: %v", err)
	}
	chmod(t, shared, 0o777)
	var cacheError *CacheError
	if err := open(link); !errors.As(err, &cacheError) || cacheError.Code != CodeInsecurePermissions || cacheError.Kind != Unreadable {
		t.Fatalf("its target's directory is world-writable: %v", err)
	}
	chmod(t, shared, 0o755)
	chmod(t, target, 0o666)
	if err := open(link); !errors.As(err, &cacheError) || cacheError.Code != CodeInsecurePermissions {
		t.Fatalf("its target is world-writable: %v", err)
	}
	if err := open(filepath.Join(shared, "none.json")); !errors.As(err, &cacheError) || cacheError.Code != CodeMissing {
		t.Fatalf("a missing fallback file: %v", err)
	}
}

// What sits at the path has a code of its own.
func TestWhatSitsAtThePathHasItsCode(t *testing.T) {
	reader, directory := newStore(t, testfiles.CacheDocument(t, "banking", nil, testfiles.Pin("api.example.com", b64(1), 0)))
	path := filepath.Join(directory, "banking.json")
	replace := func(plant func(string) error) {
		t.Helper()
		if err := os.Remove(path); err != nil {
			t.Fatal(err)
		}
		if err := plant(path); err != nil {
			t.Fatal(err)
		}
	}
	replace(func(p string) error { return os.Symlink(filepath.Join(directory, "elsewhere"), p) })
	if code := codeOf(t, reader); code != CodeSymlink {
		t.Fatalf("symlink: %s", code)
	}
	replace(func(p string) error { return syscall.Mkfifo(p, 0o644) })
	if code := codeOf(t, reader); code != CodeNotRegularFile {
		t.Fatalf("FIFO: %s", code)
	}
	replace(func(p string) error { return os.WriteFile(p, nil, 0o644) })
	if err := os.Truncate(path, MaximumFileSize+1); err != nil { // sparse: nothing is written
		t.Fatal(err)
	}
	if code := codeOf(t, reader); code != CodeTooLarge || verdictOf(t, reader, pin1) != Trusted {
		t.Fatalf("too large: %s", code)
	}
	// A path that cannot be examined (its "directory" is a file): ENOTDIR.
	notADirectory := testfiles.WriteFile(t, filepath.Join(t.TempDir(), "file"), nil)
	_, err := Open(Store{ID: "banking", CacheDirectory: notADirectory})
	var cacheError *CacheError
	if !errors.As(err, &cacheError) || cacheError.Code != CodeIOError || cacheError.Kind != Unreadable {
		t.Fatalf("ENOTDIR: %v", err)
	}
}
