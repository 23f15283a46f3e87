// Command pinkeeper-reader answers as `pinkeeper validate` does, from the Go reader:
//
//	pinkeeper-reader validate [--cache-directory DIR] --store ID --name HOST
//	    (--fingerprint B64 [--depth N] | --certificate FILE)
//	    [--fallback-file FILE] [--expected-common-name CN]...
//
// It prints trusted, untrusted: … or empty: … and exits 0, 1 or 2; 64 on a usage error, 65 bad
// data (cache file or certificate content), 66 certificate file missing or unreadable, 74 cache
// file unreadable.
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
