package pinkeeper

import (
	"crypto/x509"
	"errors"
	"path/filepath"
	"regexp"
	"sync"
	"time"
)

// DefaultCacheDirectory is where the daemon publishes when its configuration does not say otherwise.
const DefaultCacheDirectory = "/var/cache/pinkeeper"

// Store names a store's cache file and the parts of its configuration a reader applies.
type Store struct {
	ID             string // the file is <CacheDirectory>/<ID>.json, whose pinkeeper.store must be ID
	CacheDirectory string // "" is DefaultCacheDirectory
	FallbackFile   string // the store's fallback_file; "" for none
	// ExpectedCommonNames is the store's expected_common_names. nil: any name; an empty,
	// non-nil list admits no name at all.
	ExpectedCommonNames []string
}

// Reader answers "may I trust this TLS peer?" for a long-running process, from one store's
// cache file plus its fallback pins. Every question first stats the file (never following a
// symlink); it is read and parsed again only when its device and inode, size or modification
// time changed (the daemon replaces it atomically, so each version has a new inode). A missing
// file means no cached pins. When a new version cannot be used, the reader keeps answering from
// the last good one and Snapshot says why. Safe for concurrent use: a question never waits for
// another one's reading; while one question reads a new version, the others answer from the last
// good one.
type Reader struct {
	path     string
	store    string
	expected map[string]bool // folded; nil: any name
	fallback []Pin

	mu         sync.Mutex
	state      *loaded // guarded by mu
	refreshing bool    // guarded by mu: a question is reading a new version, outside the lock
}

// Open opens a store's cache file with the store's fallback pins and expected names. A missing
// file is not an error (the daemon may not have published yet: every answer is then Empty
// unless fallback pins exist); an unreadable or invalid one is (a *CacheError), and so is
// anything but a regular file at the path.
func Open(store Store) (*Reader, error) {
	if !ValidStoreID(store.ID) {
		return nil, errors.New("pinkeeper: a store id is [A-Za-z0-9][A-Za-z0-9._-]{0,63}, not '" + Escaped(store.ID) + "'")
	}
	var fallback []Pin
	if store.FallbackFile != "" {
		var err error
		if fallback, err = ReadFallback(store.FallbackFile); err != nil {
			return nil, err
		}
	}
	directory := store.CacheDirectory
	if directory == "" {
		directory = DefaultCacheDirectory
	}
	return NewReader(filepath.Join(directory, store.ID+".json"), store.ID, fallback, store.ExpectedCommonNames)
}

var storeID = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)

// ValidStoreID reports whether id is a store id as the daemon's configuration allows it (so it
// names a file in the cache directory, never a path).
func ValidStoreID(id string) bool { return storeID.MatchString(id) }

// NewReader follows the cache file at path. store, when not empty, must be the file's
// pinkeeper.store. expectedCommonNames: nil for any name, an empty list for none.
func NewReader(path, store string, fallback []Pin, expectedCommonNames []string) (*Reader, error) {
	r := &Reader{path: path, store: store, expected: foldedSet(expectedCommonNames)}
	for _, pin := range fallback {
		r.fallback = append(r.fallback, NewPin(pin.Name, pin.Fingerprint, pin.Expires, pin.Depth))
	}
	r.state = r.refreshed(&loaded{byName: index(nil, r.fallback)}, r.observe())
	if r.state.problem != nil {
		return nil, r.state.problem
	}
	return r, nil
}

// Path is the cache file followed.
func (r *Reader) Path() string { return r.path }

// Questions. Each names H, the host the client connected to and had its TLS stack verify the
// certificate for, and, when the certificate is known, N, its common name (PeerNames). Names
// compare as FoldName does.

// Verdict checks one certificate fingerprint (the raw SHA-256 of its DER) presented at depth (0 =
// leaf) of the verified chain.
func (r *Reader) Verdict(names PeerNames, fingerprint []byte, depth int64, now time.Time) Verdict {
	return r.decide(names, now, atDepth(fingerprint, depth))
}

// VerdictForChainDigests checks the SHA-256 digests of a verified chain, leaf first: each pin is
// compared with the certificate at its depth; pins deeper than the chain are skipped. Give the
// chain the TLS stack verified, never the certificates a server merely presented: a server may
// append any certificate it likes.
func (r *Reader) VerdictForChainDigests(names PeerNames, digests [][]byte, now time.Time) Verdict {
	return r.decide(names, now, inVerifiedChains([][][]byte{digests}))
}

// VerdictForVerifiedChains checks the chains crypto/x509 verified (ConnectionState.VerifiedChains,
// each leaf first and ending with a trusted root). A pin of depth d matches when the certificate
// at depth d of one of them is the pinned one: each chain is a path the platform verified from
// the leaf to a trust anchor.
func (r *Reader) VerdictForVerifiedChains(names PeerNames, chains [][]*x509.Certificate, now time.Time) Verdict {
	digests := make([][][]byte, len(chains))
	for i, chain := range chains {
		for _, certificate := range chain {
			sum := Fingerprint(certificate)
			digests[i] = append(digests[i], sum[:])
		}
	}
	return r.decide(names, now, inVerifiedChains(digests))
}

// Admits reports whether the store's expected common names (if any) admit H or N. When they do
// not, every answer is Untrusted; this tells that refusal from a pin mismatch. False without H.
func (r *Reader) Admits(names PeerNames) bool {
	return admits(r.expected, names.keys())
}

func (r *Reader) decide(names PeerNames, now time.Time, match matcher) Verdict {
	state := r.current(false)
	var pins []Pin
	// At most two lookups; the names differ once folded, so the two lists never share a pin.
	for _, key := range names.keys() {
		pins = append(pins, state.byName[key]...)
	}
	var domains *DomainsConfig
	if state.cache != nil {
		domains = state.cache.DomainsConfigInForce()
	}
	return decide(names, pins, r.expected, domains, now.Unix(), match)
}

// Snapshot is what the reader answers from. Cache is shared with the reader: read it, never change it.
type Snapshot struct {
	Cache        *CacheFile // nil while no good version exists (or the file is gone)
	FallbackPins []Pin
	// Problem is why the version at the path is not the one in use (a *CacheError); nil when it is.
	Problem error
}

// Snapshot looks at the file (reloading it if it changed) and returns what answers are based on.
func (r *Reader) Snapshot() Snapshot {
	state := r.current(false)
	return Snapshot{Cache: state.cache, FallbackPins: append([]Pin(nil), r.fallback...), Problem: state.problem}
}

// Refresh reads the file now, even when it looks unchanged, and returns why its current version
// cannot be used (a *CacheError, whose Code says why), if it cannot. Questions go on answering
// from the last good version meanwhile.
func (r *Reader) Refresh() error { return r.current(true).problem }
