package pinkeeper

// ErrorKind says whether a file could not be read or its content is invalid.
type ErrorKind int

const (
	Unreadable ErrorKind = iota // what sits at the path, its permissions, I/O
	Invalid                     // its content
)

// ErrorCode names why a cache or fallback file cannot be used, in the words every pinkeeper
// reader uses (the error_codes of Tests/Conformance/cases.json). A program acts on the code; the
// reason that comes with it is for people and may change.
type ErrorCode string

const (
	CodeMissing             ErrorCode = "missing"              // the fallback file does not exist
	CodeSymlink             ErrorCode = "symlink"              // the cache file is a symlink, never followed
	CodeNotRegularFile      ErrorCode = "not-regular-file"     // a directory, FIFO, socket or device
	CodeIOError             ErrorCode = "io-error"             // open, stat or read failed
	CodeInsecurePermissions ErrorCode = "insecure-permissions" // other users may write it or its directory
	CodeTooLarge            ErrorCode = "too-large"            // larger than MaximumFileSize
	CodeNotJSON             ErrorCode = "not-json"             // not strict JSON
	CodeInvalidContent      ErrorCode = "invalid-content"      // JSON, but not a valid list
	CodeMissingMetadata     ErrorCode = "missing-metadata"     // a list without pinkeeper's metadata
	CodeUnsupportedFormat   ErrorCode = "unsupported-format"   // a format or mode this reader does not read
	CodeWrongStore          ErrorCode = "wrong-store"          // another store's file
)

// ErrorCodes are every code a reader reports, in the table's order.
func ErrorCodes() []ErrorCode {
	return []ErrorCode{CodeMissing, CodeSymlink, CodeNotRegularFile, CodeIOError, CodeInsecurePermissions,
		CodeTooLarge, CodeNotJSON, CodeInvalidContent, CodeMissingMetadata, CodeUnsupportedFormat, CodeWrongStore}
}

// Kind is the kind the code is reported as: Unreadable for what sits at the path, its
// permissions and I/O; Invalid for its content.
func (c ErrorCode) Kind() ErrorKind {
	switch c {
	case CodeMissing, CodeSymlink, CodeNotRegularFile, CodeIOError, CodeInsecurePermissions:
		return Unreadable
	}
	return Invalid
}

// ExitStatus is the exit status of `validate` for a file refused with this code: 74 when it
// cannot be read, 65 when its content is invalid.
func (c ErrorCode) ExitStatus() int {
	if c.Kind() == Unreadable {
		return 74
	}
	return 65
}

// CacheError says why a cache or fallback file cannot be used: its code, the kind of the code,
// its path and the reason.
type CacheError struct {
	Code   ErrorCode
	Kind   ErrorKind
	Path   string
	Reason string
}

func (e *CacheError) Error() string { return e.Path + " " + e.Reason }

func fileError(code ErrorCode, path, reason string) *CacheError {
	return &CacheError{Code: code, Kind: code.Kind(), Path: path, Reason: reason}
}

// ListError says why a document is not a usable fingerprint list or cache file: its code
// (CodeNotJSON, CodeInvalidContent, CodeMissingMetadata or CodeUnsupportedFormat) and a reason
// that names the field (e.g. "fingerprints[2].expires is not an integer").
type ListError struct {
	Code   ErrorCode
	Reason string
}

func (e *ListError) Error() string { return e.Reason }

func listError(reason string) error { return &ListError{Code: CodeInvalidContent, Reason: reason} }

func notJSON(reason string) error { return &ListError{Code: CodeNotJSON, Reason: reason} }

// contentError is the CacheError of a file whose content parsing refused.
func contentError(path, what string, err error) *CacheError {
	code := CodeInvalidContent
	if list, ok := err.(*ListError); ok {
		code = list.Code
	}
	return fileError(code, path, what+err.Error())
}
