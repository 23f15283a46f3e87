package pinkeeper_test

import (
	"crypto/tls"
	"fmt"
	"time"

	pinkeeper "pinkeeper.local/reader"
)

// The README's use from net/http (compiled, not run: it needs the daemon's files and a network).
func ExampleReader_Client() {
	pins, err := pinkeeper.Open(pinkeeper.Store{
		ID:                  "banking", // /var/cache/pinkeeper/banking.json
		FallbackFile:        "/etc/pinkeeper/banking-fallback.json",
		ExpectedCommonNames: []string{"api.example.com"},
	})
	if err != nil {
		fmt.Println(err) // a *pinkeeper.CacheError: its Code says why
		return
	}
	client := pins.Client(nil) // the system's roots; or &tls.Config{RootCAs: pool}
	response, err := client.Get("https://api.example.com/")
	if refusal, ok := pinkeeper.IsPinningError(err); ok {
		fmt.Println("refused:", refusal.Verdict)
		return
	}
	if err == nil {
		response.Body.Close()
	}
}

// crypto/tls alone, and a question without a connection.
func ExampleReader_TLSConfig() {
	pins, err := pinkeeper.Open(pinkeeper.Store{ID: "banking"})
	if err != nil {
		return
	}
	connection, err := tls.Dial("tcp", "api.example.com:443", pins.TLSConfig(&tls.Config{MinVersion: tls.VersionTLS12}))
	if err == nil {
		connection.Close()
	}
	fingerprint := make([]byte, 32) // the SHA-256 of a certificate's DER
	fmt.Println(pins.Verdict(pinkeeper.Host("api.example.com"), fingerprint, 0, time.Now()))
}
