package pinkeeper

import (
	"errors"
	"io/fs"
	"os"
)

// How a Reader notices and reads new versions of its cache file.

// loaded is one parsed state: the version it came from and its pins indexed by folded name.
type loaded struct {
	observed observation
	cache    *CacheFile
	byName   map[string][]Pin // pins in force, then fallback pins
	problem  error            // why the version observed last is not the one in use; nil when it is
}

// observation is what the last stat said: a file (its identity), no file, or a failure.
type observation struct {
	kind     int // observedNothingYet, observedMissing, observedFile, observedFailure
	identity fileIdentity
	failure  string
}

const (
	observedNothingYet = iota
	observedMissing
	observedFile
	observedFailure
)

// current is the state to answer from, after looking at the file. Only the question that finds a
// new version reads it, outside the lock; the others answer from the last good state meanwhile.
// reread reads the file even when it looks unchanged (Refresh: its directory may have changed).
func (r *Reader) current(reread bool) *loaded {
	seen := r.observe()
	r.mu.Lock()
	if r.refreshing || (seen == r.state.observed && !reread) {
		state := r.state
		r.mu.Unlock()
		return state
	}
	r.refreshing = true
	base := r.state
	r.mu.Unlock()

	next := base // kept should reading panic: the reader stays usable, on its last good pins
	defer func() {
		r.mu.Lock()
		r.state, r.refreshing = next, false
		r.mu.Unlock()
	}()
	next = r.refreshed(base, seen)
	return next
}

// observe stats the path itself, never a symlink's target: a symlink is a version of its own,
// refused when read.
func (r *Reader) observe() observation {
	info, err := os.Lstat(r.path)
	switch {
	case err == nil:
		return observation{kind: observedFile, identity: identityOf(info)}
	case errors.Is(err, fs.ErrNotExist):
		return observation{kind: observedMissing}
	default:
		return observation{kind: observedFailure, failure: causeOf(err)}
	}
}

// refreshed is the state after looking at the file again. A missing file means no cached pins; a
// version that cannot be used leaves the last good pins in place and records why (and is not read
// again until it changes).
func (r *Reader) refreshed(base *loaded, seen observation) *loaded {
	keep := func(problem error) *loaded {
		return &loaded{observed: seen, cache: base.cache, byName: base.byName, problem: problem}
	}
	switch seen.kind {
	case observedMissing:
		return &loaded{observed: seen, byName: index(nil, r.fallback)}
	case observedFailure:
		return keep(fileError(CodeIOError, r.path, "cannot be examined: "+seen.failure))
	}
	cache, identity, err := readCacheFile(r.path, r.store)
	switch {
	case err != nil:
		return keep(err)
	case cache == nil: // gone between the stat and the open
		return &loaded{observed: observation{kind: observedMissing}, byName: index(nil, r.fallback)}
	}
	// The identity of what was read: a replacement that raced with the read differs from it.
	return &loaded{observed: observation{kind: observedFile, identity: identity}, cache: cache, byName: index(cache, r.fallback)}
}

// index is the pins by folded name: those in force in the cache, then the fallback pins.
func index(cache *CacheFile, fallback []Pin) map[string][]Pin {
	byName := map[string][]Pin{}
	var all []Pin
	if cache != nil {
		all = append(all, cache.PinsInForce()...)
	}
	for _, pin := range append(all, fallback...) {
		byName[pin.key] = append(byName[pin.key], pin)
	}
	return byName
}
