package main

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	pinkeeper "pinkeeper.local/reader"
)

const usage = "usage: pinkeeper-reader validate [--cache-directory DIR] --store ID --name HOST\n" +
	"           (--fingerprint B64 [--depth N] | --certificate FILE)\n" +
	"           [--fallback-file FILE] [--expected-common-name CN]..."

// help is what --help prints after the usage. What the daemon drops when a signing key leaves its
// configuration cannot be told from the file: it names the key that verified each pin and
// domainsConfig, not the keys still configured.
const help = usage + "\n\n" +
	"Answers trusted, untrusted or empty for a certificate of a host from the published cache, as\n" +
	"pinkeeper validate does. Reads no configuration: after a signing key is removed from the daemon's\n" +
	"configuration, its pins and its domainsConfig still decide here until the daemon drops them from\n" +
	"the file (when it starts or reloads, or at `pinkeeper update`); the file names the key that\n" +
	"verified each, not the keys still configured. `pinkeeper validate` without --cache-directory\n" +
	"counts only what the configured keys vouch for.\n" +
	"Exit status: 0 trusted; 1 untrusted; 2 empty (reject, and update the store); 64 usage error;\n" +
	"65 bad data; 66 certificate file missing or unreadable; 74 cache or fallback file unreadable."

// exit ends the command with a status after a message on standard error.
type exit struct {
	status  int
	message string
}

func (e *exit) Error() string { return e.message }

// usageError: the first line says "pinkeeper: usage: …", as every pinkeeper command line does.
func usageError(message string) *exit { return &exit{64, "usage: " + message} }

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
// missing or unreadable, 74 cache file unreadable). --name is the host H (docs/protocol.md, "the
// host decides"), put in its one form before anything is decided; with --certificate the leaf's
// common name is N, with --fingerprint there is no certificate and H alone decides.
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
		fmt.Fprintln(out, help)
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
		fmt.Fprintln(out, help)
		return 0, nil
	}
	return execute(given, out, now)
}

// parse reads the options; each but --expected-common-name at most once.
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
		target := given.field(option)
		if target == nil {
			return given, usageError("unknown option '" + pinkeeper.Escaped(option) + "'")
		}
		if !hasValue {
			if index+1 >= len(args) {
				return given, usageError("missing value for " + pinkeeper.Escaped(option))
			}
			index++
			value = args[index]
		}
		if option == "--expected-common-name" {
			given.expectedNames = append(given.expectedNames, value)
		} else if given.given[option] {
			return given, usageError(option + " is given twice")
		}
		*target = value
		given.given[option] = true
	}
	return given, checkOptions(given)
}

// field is where an option's value goes; nil for an unknown option.
func (o *options) field(option string) *string {
	var unused string
	return map[string]*string{"--cache-directory": &o.cacheDirectory, "--store": &o.store, "--name": &o.name,
		"--fingerprint": &o.fingerprint, "--depth": &o.depth, "--certificate": &o.certificate,
		"--fallback-file": &o.fallbackFile, "--expected-common-name": &unused}[option]
}

func checkOptions(given options) error {
	switch {
	case !given.given["--store"]:
		return usageError("missing --store")
	case !pinkeeper.ValidStoreID(given.store):
		return usageError("--store must match [A-Za-z0-9][A-Za-z0-9._-]{0,63}, not '" + pinkeeper.Escaped(given.store) + "'")
	case !given.given["--name"]:
		return usageError("missing --name")
	case given.name == "":
		return usageError("--name must be the host a client connects to, not empty")
	case given.given["--fingerprint"] == given.given["--certificate"]:
		return usageError("give exactly one of --fingerprint or --certificate")
	case given.given["--depth"] && !given.given["--fingerprint"]:
		return usageError("--depth goes with --fingerprint (a chain's depths are its positions)")
	case given.given["--depth"] && parseDepth(given.depth) < 0:
		return usageError("--depth must be one to nine digits 0-9 (0 is the leaf), not '" + pinkeeper.Escaped(given.depth) + "'")
	}
	if _, ok := pinkeeper.ParseFingerprint(given.fingerprint); given.given["--fingerprint"] && !ok {
		return usageError("--fingerprint must be the SHA-256 of a certificate in padded standard base64 (44 characters) or " +
			"64 hex digits (plain or as 32 colon-separated pairs), not '" + pinkeeper.Escaped(given.fingerprint) + "'")
	}
	return nil
}

// parseDepth is -1 unless text is one to nine ASCII digits (no sign, space or other script's digits).
func parseDepth(text string) int64 {
	if len(text) < 1 || len(text) > 9 || strings.Trim(text, "0123456789") != "" {
		return -1
	}
	depth, err := strconv.ParseInt(text, 10, 64)
	if err != nil {
		return -1
	}
	return depth
}
