// Package pinkeeper answers "may I trust this TLS peer?" from the pins that the pinkeeper daemon
// publishes for a store (<cache_directory>/<store>.json, docs/cache-format.md), with the answers
// every pinkeeper reader gives (Tests/Conformance/cases.json): Trusted, Untrusted or Empty.
//
// A Reader follows one store's cache file (it stats the file at every question and parses it
// again only when it changed, keeping the last good pins when a new version cannot be used),
// plus the store's fallback pins and expected common names. A file it refuses is a *CacheError
// whose Code is one of the table's error codes (ErrorCodes); so is a cache or fallback file that
// other users may write, or may replace through its directory. TLSConfig, Transport and Client put
// it behind crypto/tls and net/http: the platform verifies the chain and the host name, then
// tls.Config.VerifyConnection checks the pins against the verified chains, before any
// application data is sent.
//
// Every question is about two names (docs/protocol.md, "the host decides"): H, the host the
// client connected to and verified, put in its one spelling by CanonicalHost (a spelling it
// refuses answers Untrusted, and refuses a TLS connection), and N, the leaf certificate's common
// name. N is chosen by the certificate's holder: it can add pins to compare, never lift a
// requirement H has.
package pinkeeper
