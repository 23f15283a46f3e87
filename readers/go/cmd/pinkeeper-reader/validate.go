package main

import (
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
	"time"

	pinkeeper "pinkeeper.local/reader"
)

const usage = "usage: pinkeeper-reader validate [--cache-directory DIR] --store ID --name HOST\n" +
	"           (--fingerprint B64 [--depth N] | --certificate FILE)\n" +
	"           [--fallback-file FILE] [--expected-common-name CN]..."

// exit ends the command with a status after a message on standard error.
type exit struct {
	status  int
	message string
}

func (e *exit) Error() string { return e.message }

func usageError(message string) *exit { return &exit{64, message} }

// options are the command line of `validate`; given says which options were given, so that an
// empty value (e.g. --name "", a usage error) is told from an option left out.
type options struct {
	cacheDirectory, store, name, fingerprint, depth, certificate, fallbackFile string
	expectedNames                                                              []string
	given                                                                      map[string]bool
	help                                                                       bool
}

// run is the command: the answer of `pinkeeper validate` from this reader, with its output and
// exit statuses (0 trusted, 1 untrusted, 2 empty, 64 usage, 65 bad data, 66 certificate file
// missing or unreadable, 74 cache file unreadable). --name is the host H (docs/protocol.md, "the host decides"); with
// --certificate the leaf's common name is N, with --fingerprint there is no certificate and H
// alone decides.
func run(args []string, stdout, stderr io.Writer, now func() time.Time) int {
	status, err := validate(args, stdout, now)
	var failure *exit
	if errors.As(err, &failure) {
		fmt.Fprintln(stderr, "pinkeeper: "+failure.message)
		if failure.status == 64 {
			fmt.Fprintln(stderr, usage)
		}
		return failure.status
	}
	return status
}

func validate(args []string, out io.Writer, now func() time.Time) (int, error) {
	if len(args) > 0 && (args[0] == "--help" || args[0] == "-h") {
		fmt.Fprintln(out, usage)
		return 0, nil
	}
	if len(args) == 0 || args[0] != "validate" {
		return 0, usageError("the only command is 'validate'")
	}
	given, err := parse(args[1:])
	if err != nil {
		return 0, err
	}
	if given.help {
		fmt.Fprintln(out, usage)
		return 0, nil
	}
	return execute(given, out, now)
}

func parse(args []string) (options, error) {
	given := options{cacheDirectory: pinkeeper.DefaultCacheDirectory, given: map[string]bool{}}
	for index := 0; index < len(args); index++ {
		option, value, hasValue := args[index], "", false
		if equals := strings.IndexByte(option, '='); strings.HasPrefix(option, "--") && equals > 0 {
			option, value, hasValue = option[:equals], option[equals+1:], true
		}
		if option == "--help" || option == "-h" {
			given.help = true
			return given, nil
		}
		if !hasValue {
			if index+1 >= len(args) {
				return given, usageError("missing value for " + pinkeeper.Escaped(option))
			}
			index++
			value = args[index]
		}
		switch option {
		case "--cache-directory":
			given.cacheDirectory = value
		case "--store":
			given.store = value
		case "--name":
			given.name = value
		case "--fingerprint":
			given.fingerprint = value
		case "--depth":
			given.depth = value
		case "--certificate":
			given.certificate = value
		case "--fallback-file":
			given.fallbackFile = value
		case "--expected-common-name":
			given.expectedNames = append(given.expectedNames, value)
		default:
			return given, usageError("unknown option '" + pinkeeper.Escaped(option) + "'")
		}
		given.given[option] = true
	}
	switch {
	case !given.given["--store"]:
		return given, usageError("missing --store")
	case !pinkeeper.ValidStoreID(given.store):
		return given, usageError("--store must match [A-Za-z0-9][A-Za-z0-9._-]{0,63}, not '" + pinkeeper.Escaped(given.store) + "'")
	case !given.given["--name"]:
		return given, usageError("missing --name")
	case given.name == "":
		return given, usageError("--name must be the host a client connects to, not empty")
	case given.given["--fingerprint"] == given.given["--certificate"]:
		return given, usageError("give exactly one of --fingerprint or --certificate")
	}
	if given.given["--depth"] {
		if !given.given["--fingerprint"] {
			return given, usageError("--depth goes with --fingerprint (a chain's depths are its positions)")
		}
		if parseDepth(given.depth) < 0 {
			return given, usageError("--depth must be 0 (leaf) or more, not '" + pinkeeper.Escaped(given.depth) + "'")
		}
	}
	if _, ok := pinkeeper.ParseFingerprint(given.fingerprint); given.given["--fingerprint"] && !ok {
		return given, usageError("--fingerprint must be the base64 (or hex) of a 32-byte SHA-256 digest, not '" +
			pinkeeper.Escaped(given.fingerprint) + "'")
	}
	return given, nil
}

var decimalDepth = regexp.MustCompile(`^[0-9]{1,18}$`)

// parseDepth is -1 unless text is a decimal integer of 0 or more.
func parseDepth(text string) int64 {
	if !decimalDepth.MatchString(text) {
		return -1
	}
	depth, _ := strconv.ParseInt(text, 10, 64)
	return depth
}

func execute(given options, out io.Writer, now func() time.Time) (int, error) {
	var expected []string // nil: any name, as without expected_common_names
	if len(given.expectedNames) > 0 {
		expected = given.expectedNames
	}
	reader, err := pinkeeper.Open(pinkeeper.Store{ID: given.store, CacheDirectory: given.cacheDirectory,
		FallbackFile: given.fallbackFile, ExpectedCommonNames: expected})
	if err != nil {
		status := 74
		var cacheError *pinkeeper.CacheError
		if errors.As(err, &cacheError) && cacheError.Kind == pinkeeper.Invalid {
			status = 65
		}
		return 0, &exit{status, "store '" + given.store + "': " + pinkeeper.Escaped(err.Error())}
	}
	var verdict pinkeeper.Verdict
	names := pinkeeper.Host(given.name)
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
		printChain(out, chain, given.name)
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
	}
	store, described := given.store, names.Described()
	switch verdict {
	case pinkeeper.Trusted:
		fmt.Fprintln(out, "trusted")
	case pinkeeper.Untrusted:
		if !reader.Admits(names) {
			fmt.Fprintln(out, "untrusted: "+described+" is not among the expected_common_names of store '"+store+"'")
		} else {
			fmt.Fprintln(out, "untrusted: store '"+store+"' pins "+described+", but not this certificate")
		}
	case pinkeeper.Empty:
		fmt.Fprintln(out, "empty: store '"+store+"' has no valid pin for "+described+
			"; reject, and run `pinkeeper update --store "+store+"`")
	}
	return verdict.ExitStatus(), nil
}
