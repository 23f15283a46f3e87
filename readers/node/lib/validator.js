'use strict';
// The answer to "may I trust this TLS peer?": Wultra's semantics as pinkeeper's rule "the host
// decides" reads them (docs/protocol.md).

/** Callers must reject the connection on both UNTRUSTED and EMPTY. */
const Verdict = Object.freeze({
  TRUSTED: 'trusted',
  UNTRUSTED: 'untrusted',
  /** No live pin for the peer's names: reject, and the store needs an update. */
  EMPTY: 'empty',
});

/** The exit status of `validate` for a verdict. */
const EXIT_STATUS = Object.freeze({ trusted: 0, untrusted: 1, empty: 2 });

/** Whether the expected names (a Set of folded names, or null for no list) admit H or N. Nothing without H. */
function admits(keys, expected) {
  if (keys.length === 0) return false;
  return expected === null || keys.some((key) => expected.has(key));
}

/**
 * In order: no H (empty, or a spelling refused by canonicalHost) is untrusted; expected names,
 * when set, must hold H or N; domainsConfig skips
 * pinning only when it exempts both; then every live pin under H or N is compared where
 * `matches(pin)` applies (it answers null where the pin does not, e.g. at another depth): a match
 * is trusted, pins compared without a match untrusted, none compared (or no pins at all) empty.
 *
 * @param {{ key: string, expires: bigint }[]} pins the pins under the peer's names (cached, then fallback)
 * @param {string[]} keys the peer's folded names (peerKeys)
 * @param {Set<string> | null} expected
 * @param {{ requiredFor(key: string): boolean } | null} domainsConfig
 * @param {bigint} now Unix seconds
 * @param {(pin: any) => boolean | null} matches
 */
function decide(pins, keys, expected, domainsConfig, now, matches) {
  // Without the host the client verified, only the name the certificate's holder chose would be
  // left to decide by: an empty or refused H is untrusted, whatever N and the store say.
  if (keys.length === 0) return Verdict.UNTRUSTED;
  // The operator's expected names first: nothing the server sends widens them.
  if (!admits(keys, expected)) return Verdict.UNTRUSTED;
  // A CN listed as "not required" never lifts the requirement of the host that was verified.
  if (domainsConfig !== null && !keys.some((key) => domainsConfig.requiredFor(key))) return Verdict.TRUSTED;
  let attempts = 0;
  for (const pin of pins) {
    if (pin.expires < now || !keys.includes(pin.key)) continue;
    const matched = matches(pin);
    if (matched === true) return Verdict.TRUSTED;
    if (matched === false) attempts++;
  }
  return attempts > 0 ? Verdict.UNTRUSTED : Verdict.EMPTY;
}

/** One certificate digest presented at `depth`: only pins of that depth apply. */
function atDepth(fingerprint, depth) {
  return (pin) => (pin.depth === depth ? pin.fingerprint.equals(fingerprint) : null);
}

/** The verified chain's digests, leaf first: each pin meets the certificate at its depth; deeper pins are skipped. */
function inChain(digests) {
  const length = BigInt(digests.length);
  return (pin) => (pin.depth < length ? digests[Number(pin.depth)].equals(pin.fingerprint) : null);
}

module.exports = { Verdict, EXIT_STATUS, admits, decide, atDepth, inChain };
