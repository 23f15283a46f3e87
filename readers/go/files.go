package pinkeeper

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"strconv"
	"syscall"
)

// MaximumFileSize: a cache file is a few hundred bytes per pin; anything this large is not one.
const MaximumFileSize = 64 << 20

// fileIdentity is what stat says about a version: enough to notice an atomic replacement (a new
// inode) or an edit in place (size, modification time in nanoseconds).
// The mode is part of it: a version refused for its permissions is read again once they are fixed.
type fileIdentity struct {
	device, inode  uint64
	size           int64
	seconds, nanos int64
	mode           fs.FileMode
}

func identityOf(info fs.FileInfo) fileIdentity {
	identity := fileIdentity{size: info.Size(), nanos: int64(info.ModTime().Nanosecond()), seconds: info.ModTime().Unix(),
		mode: info.Mode()}
	if stat, ok := info.Sys().(*syscall.Stat_t); ok {
		identity.device, identity.inode = uint64(stat.Dev), stat.Ino
	}
	return identity
}

// readRegularFile is the whole file and the identity of what was read (from the open descriptor,
// so that a replacement racing with the read is noticed at the next question); found is false
// when the file does not exist. Only a regular file is read: it is opened with O_NONBLOCK, so a
// FIFO planted at the path is refused at once rather than waited on, and with O_NOFOLLOW unless
// followLinks (only the operator's fallback file gets that), so that whoever can write the cache
// directory cannot point the reader elsewhere.
func readRegularFile(path string, followLinks bool) (data []byte, identity fileIdentity, found bool, err error) {
	flags := syscall.O_RDONLY | syscall.O_CLOEXEC | syscall.O_NONBLOCK
	if !followLinks {
		flags |= syscall.O_NOFOLLOW
	}
	descriptor, openErr := syscall.Open(path, flags, 0)
	for openErr == syscall.EINTR {
		descriptor, openErr = syscall.Open(path, flags, 0)
	}
	if openErr != nil {
		switch {
		case openErr == syscall.ENOENT:
			return nil, identity, false, nil
		case openErr == syscall.ELOOP && !followLinks && isSymlink(path):
			return nil, identity, true, fileError(CodeSymlink, path, "is a symlink, which is never followed: remove it")
		}
		return nil, identity, true, fileError(CodeIOError, path, "cannot be opened: "+openErr.Error())
	}
	file := os.NewFile(uintptr(descriptor), path)
	defer file.Close()
	info, statErr := file.Stat()
	if statErr != nil {
		return nil, identity, true, fileError(CodeIOError, path, "cannot be examined: "+causeOf(statErr))
	}
	if !info.Mode().IsRegular() {
		return nil, identity, true, fileError(CodeNotRegularFile, path, "is not a regular file (a FIFO, device or directory?): remove it")
	}
	if err := checkPermissions(path, info, followLinks); err != nil {
		return nil, identity, true, err
	}
	tooLarge := fileError(CodeTooLarge, path, "is larger than "+strconv.Itoa(MaximumFileSize)+" bytes")
	if info.Size() > MaximumFileSize {
		return nil, identity, true, tooLarge
	}
	data, readErr := io.ReadAll(io.LimitReader(file, MaximumFileSize+1))
	if readErr != nil {
		return nil, identity, true, fileError(CodeIOError, path, "cannot be read: "+causeOf(readErr))
	}
	if len(data) > MaximumFileSize {
		return nil, identity, true, tooLarge
	}
	return data, identityOf(info), true, nil
}

func isSymlink(path string) bool {
	info, err := os.Lstat(path)
	return err == nil && info.Mode()&fs.ModeSymlink != 0
}

// causeOf is the operating system's reason without the path, which the message already names.
func causeOf(err error) string {
	var pathErr *fs.PathError
	if errors.As(err, &pathErr) {
		return pathErr.Err.Error()
	}
	return err.Error()
}

// ReadFallback reads a Wultra fallback list ({"fingerprints": [...]}); its domainsConfig is
// ignored, as the mobile clients ignore it in fallback data. Unlike a cache file it may be a
// symlink: it is configuration the operator placed, in a directory of theirs. Its target must be
// a regular file.
func ReadFallback(path string) ([]Pin, error) {
	data, _, found, err := readRegularFile(path, true)
	if err != nil {
		return nil, err
	}
	if !found {
		return nil, fileError(CodeMissing, path, "does not exist: check the store's fallback_file")
	}
	list, err := ParsePinList(data)
	if err != nil {
		return nil, contentError(path, "is not a Wultra fingerprint list: ", err)
	}
	return list.Pins, nil
}

// ReadCacheFile reads and checks a cache file; nil (and no error) when it does not exist. A
// symlink is refused, never followed. When store is not empty, the file's pinkeeper.store must
// name it.
func ReadCacheFile(path, store string) (*CacheFile, error) {
	cache, _, err := readCacheFile(path, store)
	return cache, err
}

func readCacheFile(path, store string) (*CacheFile, fileIdentity, error) {
	data, identity, found, err := readRegularFile(path, false)
	if err != nil || !found {
		return nil, identity, err
	}
	cache, err := ParseCacheFile(data)
	if err != nil {
		return nil, identity, contentError(path, "is not a pinkeeper cache file: ", err)
	}
	if store != "" && cache.Metadata.Store != store {
		return nil, identity, fileError(CodeWrongStore, path,
			"belongs to store '"+Escaped(cache.Metadata.Store)+"', not '"+Escaped(store)+"'")
	}
	return &cache, identity, nil
}
