package main

import (
	"errors"
	"fmt"
	"io"
	"time"

	pinkeeper "pinkeeper.local/reader"
)

// execute reads the store once and answers: the verdict line first (its first word is what a
// script reads), then, for --certificate, the certificates of the file and a note when the
// leaf's common name is another name than --name.
func execute(given options, out io.Writer, now func() time.Time) (int, error) {
	var expected []string // nil: any name, as without expected_common_names
	if given.given["--expected-common-name"] {
		expected = []string{} // given, if only empty: no name at all
		for _, name := range given.expectedNames {
			if name != "" {
				expected = append(expected, name)
			}
		}
	}
	reader, err := pinkeeper.Open(pinkeeper.Store{ID: given.store, CacheDirectory: given.cacheDirectory,
		FallbackFile: given.fallbackFile, ExpectedCommonNames: expected})
	if err != nil {
		return 0, storeError(given.store, err)
	}
	names := pinkeeper.Host(given.name)
	var verdict pinkeeper.Verdict
	var listing func()
	if given.given["--fingerprint"] {
		digest, _ := pinkeeper.ParseFingerprint(given.fingerprint)
		depth := int64(0)
		if given.given["--depth"] {
			depth = parseDepth(given.depth)
		}
		verdict = reader.Verdict(names, digest, depth, now())
	} else {
		chain, err := readChain(given.certificate)
		if err != nil {
			return 0, err
		}
		// The file stands for a verified chain: its leaf's common name is N.
		if commonName, ok := pinkeeper.CommonName(chain[0]); ok {
			names = pinkeeper.HostAndCommonName(given.name, commonName)
		}
		digests := make([][]byte, len(chain))
		for index, certificate := range chain {
			sum := pinkeeper.Fingerprint(certificate)
			digests[index] = sum[:]
		}
		verdict = reader.VerdictForChainDigests(names, digests, now())
		listing = func() { printChain(out, chain, given.name) }
	}
	printVerdict(out, verdict, reader, names, given.store)
	if listing != nil {
		listing()
	}
	return verdict.ExitStatus(), nil
}

// storeError is a file the reader refuses: "<code>: store '<id>': <path> <reason>", exiting 74
// when it cannot be read and 65 when its content is invalid.
func storeError(store string, err error) error {
	var cacheError *pinkeeper.CacheError
	if errors.As(err, &cacheError) {
		return &exit{cacheError.Code.ExitStatus(), string(cacheError.Code) + ": store '" + store + "': " + pinkeeper.Escaped(err.Error())}
	}
	return &exit{74, "io-error: store '" + store + "': " + pinkeeper.Escaped(err.Error())}
}

func printVerdict(out io.Writer, verdict pinkeeper.Verdict, reader *pinkeeper.Reader, names pinkeeper.PeerNames, store string) {
	described := names.Described()
	switch _, spelled := names.CanonicalHostName(); {
	case verdict == pinkeeper.Trusted:
		fmt.Fprintln(out, "trusted")
	case !spelled:
		fmt.Fprintln(out, "untrusted: "+described+" is not a host name in one spelling (docs/protocol.md), so no pin "+
			"of store '"+store+"' can vouch for it: give the host as clients connect to it (e.g. 127.0.0.1, ::1, api.example.com)")
	case verdict == pinkeeper.Untrusted && !reader.Admits(names):
		fmt.Fprintln(out, "untrusted: "+described+" is not among the expected_common_names of store '"+store+"'")
	case verdict == pinkeeper.Untrusted:
		fmt.Fprintln(out, "untrusted: store '"+store+"' pins "+described+", but not this certificate")
	default:
		fmt.Fprintln(out, "empty: store '"+store+"' has no valid pin for "+described+
			"; reject, and run `pinkeeper update --store "+store+"`")
	}
}
