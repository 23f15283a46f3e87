package pinkeeper

// Verdict is the answer to "may I trust this TLS peer?" with Wultra's semantics. Reject the
// connection on both Untrusted and Empty.
type Verdict int

const (
	Trusted Verdict = iota
	Untrusted
	// Empty: no live pin exists for the names. Reject, and the store needs an update.
	Empty
)

// String is the word `pinkeeper validate` prints: trusted, untrusted or empty.
func (v Verdict) String() string {
	switch v {
	case Trusted:
		return "trusted"
	case Untrusted:
		return "untrusted"
	default:
		return "empty"
	}
}

// ExitStatus is the exit status of `validate`: 0, 1 or 2.
func (v Verdict) ExitStatus() int { return int(v) }

// matcher says whether a pin matches what was presented, or applies (false when it does not
// apply to it at all, e.g. a pin of another depth).
type matcher func(pin Pin) (applies, matched bool)

// decide is the validation of docs/protocol.md with "the host decides", in this order:
//
//  1. no H (empty, or a spelling CanonicalHost refuses): untrusted, whatever N is;
//  2. expected common names, when set (non-nil): untrusted unless H or N is one of them;
//  3. domainsConfig: trusted without pins only when it exempts both H and N;
//  4. no pins at all: empty;
//  5. every live pin under H or N is compared: a match is trusted;
//  6. otherwise untrusted when some pin was compared, else empty.
//
// pins are those under the names (cached in force, then fallback); expected is folded.
func decide(names PeerNames, pins []Pin, expected map[string]bool, domains *DomainsConfig, now int64, match matcher) Verdict {
	keys := names.keys()
	// Without the host the client verified, only the name the certificate's holder chose would
	// be left to decide by (docs/protocol.md, "the host decides").
	if len(keys) == 0 {
		return Untrusted
	}
	// The operator's expected names first: nothing the server sends widens them.
	if !admits(expected, keys) {
		return Untrusted
	}
	if domains != nil && !domains.pinningRequired(keys) {
		return Trusted
	}
	attempts := 0
	for _, pin := range pins {
		if pin.Expired(now) || !contains(keys, pin.key) {
			continue
		}
		applies, matched := match(pin)
		if matched {
			return Trusted
		}
		if applies {
			attempts++
		}
	}
	// No pins at all, no live pin for the names, or none at the asked depth: all empty.
	if attempts > 0 {
		return Untrusted
	}
	return Empty
}

// admits: expected (folded; nil: no list) holds one of keys. No keys (no H) admit nothing.
func admits(expected map[string]bool, keys []string) bool {
	if len(keys) == 0 {
		return false
	}
	if expected == nil {
		return true
	}
	for _, key := range keys {
		if expected[key] {
			return true
		}
	}
	return false
}

func contains(list []string, value string) bool {
	for _, item := range list {
		if item == value {
			return true
		}
	}
	return false
}

// foldedSet is names folded as a set; nil for nil (no list: any name), empty for an empty list.
func foldedSet(names []string) map[string]bool {
	if names == nil {
		return nil
	}
	set := make(map[string]bool, len(names))
	for _, name := range names {
		set[FoldName(name)] = true
	}
	return set
}

// atDepth: one certificate's digest presented at depth; only pins of that depth apply.
func atDepth(fingerprint []byte, depth int64) matcher {
	return func(pin Pin) (bool, bool) {
		if pin.Depth != depth {
			return false, false
		}
		return true, pin.Matches(fingerprint)
	}
}

// inVerifiedChains: the digests of verified chains, leaf first. A pin applies when its depth lies
// within one of them, and matches when the certificate at its depth in one of them is the pinned
// one; pins deeper than every chain are skipped.
func inVerifiedChains(chains [][][]byte) matcher {
	return func(pin Pin) (applies, matched bool) {
		for _, chain := range chains {
			if pin.Depth < int64(len(chain)) {
				applies = true
				if pin.Matches(chain[pin.Depth]) {
					return true, true
				}
			}
		}
		return applies, false
	}
}
