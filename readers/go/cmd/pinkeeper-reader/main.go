// Command pinkeeper-reader answers as `pinkeeper validate` does, from the Go reader:
//
//	pinkeeper-reader validate [--cache-directory DIR] --store ID --name HOST
//	    (--fingerprint B64 [--depth N] | --certificate FILE)
//	    [--fallback-file FILE] [--expected-common-name CN]...
//
// It puts HOST in its one spelling (pinkeeper.CanonicalHost; a refused spelling is untrusted),
// prints trusted, untrusted: … or empty: … first and exits 0, 1 or 2. A file the reader refuses
// prints "pinkeeper: <error code>: …" and exits 74 (unreadable) or 65 (invalid content); a usage
// error prints "pinkeeper: usage: …" and exits 64; a certificate file missing or unreadable 66.
// It reads no configuration, so the pins and domainsConfig of a signing key removed from the
// daemon's configuration decide until the daemon drops them from the file; --help says so.
package main

import (
	"os"
	"strconv"
	"time"
)

// testClock names an environment variable that gives "now" in Unix seconds. It is empty in the
// binary `make go-reader` builds, which always uses the real clock; only the tests build a copy
// with it set (-ldflags -X main.testClock=...), to play the conformance table's times.
var testClock string

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr, clock()))
}

func clock() func() time.Time {
	if testClock != "" {
		if seconds, err := strconv.ParseInt(os.Getenv(testClock), 10, 64); err == nil {
			return func() time.Time { return time.Unix(seconds, 0) }
		}
	}
	return time.Now
}
