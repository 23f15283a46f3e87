package pinkeeper

import (
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
)

// checkPermissions refuses a file that users other than its owner and group may write, or one
// in a directory they may write without the sticky bit (where they could replace it): whoever
// can do either can plant pins. info is the open file's (fstat); the directory is looked at
// again on every read. A fallback file may be a symlink (followLinks): then the directory of the
// file it names is checked too.
func checkPermissions(path string, info fs.FileInfo, followLinks bool) *CacheError {
	if info.Mode().Perm()&0o002 != 0 {
		return fileError(CodeInsecurePermissions, path, "is writable by every user (mode "+octal(info.Mode())+
			"), so anyone could plant pins: run chmod o-w on it")
	}
	directories := []string{filepath.Dir(path)}
	if followLinks {
		if target, err := filepath.EvalSymlinks(path); err == nil && filepath.Dir(target) != directories[0] {
			directories = append(directories, filepath.Dir(target))
		}
	}
	for _, directory := range directories {
		directoryInfo, err := os.Stat(directory)
		if err != nil {
			return fileError(CodeIOError, path, "cannot be checked: its directory "+directory+" cannot be examined: "+causeOf(err))
		}
		if directoryInfo.Mode().Perm()&0o002 != 0 && directoryInfo.Mode()&fs.ModeSticky == 0 {
			return fileError(CodeInsecurePermissions, path, "is in "+directory+", which every user may write (mode "+
				octal(directoryInfo.Mode())+", no sticky bit), so anyone could replace it: run chmod o-w on the directory")
		}
	}
	return nil
}

// octal is a mode as chmod takes it, e.g. 0666 or 1777.
func octal(mode fs.FileMode) string {
	bits := uint32(mode.Perm())
	if mode&fs.ModeSticky != 0 {
		bits |= 0o1000
	}
	if mode&fs.ModeSetgid != 0 {
		bits |= 0o2000
	}
	if mode&fs.ModeSetuid != 0 {
		bits |= 0o4000
	}
	text := strconv.FormatUint(uint64(bits), 8)
	for len(text) < 4 {
		text = "0" + text
	}
	return text
}
