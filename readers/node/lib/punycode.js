'use strict';
// RFC 3492 Punycode encoding of one label, for H in one spelling (host.js). Node's `punycode`
// module is deprecated and warns when loaded, and url.domainToASCII applies IDNA mapping first
// (it would make `bÜcher` the same name as `bücher`): the label is encoded exactly as written.

// The parameters of RFC 3492 section 5.
const BASE = 36;
const TMIN = 1;
const TMAX = 26;
const SKEW = 38;
const DAMP = 700;
const INITIAL_BIAS = 72;
const INITIAL_N = 0x80;
const MAXIMUM = 0x7fffffff; // deltas are bounded so that no label overflows (section 6.4)

/** The basic code point for digit `d` (0–35): a–z, then 0–9. */
function digit(d) {
  return String.fromCharCode(d < 26 ? 0x61 + d : 0x16 + d);
}

/** Section 6.1: the bias after a delta. */
function adapt(delta, points, first) {
  let scaled = first ? Math.floor(delta / DAMP) : delta >> 1;
  scaled += Math.floor(scaled / points);
  let k = 0;
  while (scaled > ((BASE - TMIN) * TMAX) >> 1) {
    scaled = Math.floor(scaled / (BASE - TMIN));
    k += BASE;
  }
  return k + Math.floor(((BASE - TMIN + 1) * scaled) / (scaled + SKEW));
}

/** `delta` as a generalized variable-length integer (section 6.3). */
function variableLength(delta, bias) {
  let out = '';
  let q = delta;
  for (let k = BASE; ; k += BASE) {
    const t = k <= bias ? TMIN : k >= bias + TMAX ? TMAX : k - bias;
    if (q < t) return out + digit(q);
    out += digit(t + ((q - t) % (BASE - t)));
    q = Math.floor((q - t) / (BASE - t));
  }
}

/**
 * The Punycode of `label` (without the `xn--` prefix): its basic code points in order, a `-` when
 * there are any, then the insertions of the others (section 6.3).
 * @param {string} label Unicode scalars (no lone surrogates)
 * @returns {string | null} null for a label too long to encode (beyond RFC 3492's 31-bit deltas)
 */
function punycode(label) {
  const points = Array.from(label, (character) => character.codePointAt(0));
  let out = points.filter((point) => point < 0x80).map((point) => String.fromCharCode(point)).join('');
  const basic = out.length;
  if (basic > 0) out += '-';
  let n = INITIAL_N;
  let delta = 0;
  let bias = INITIAL_BIAS;
  for (let handled = basic; handled < points.length;) {
    const next = Math.min(...points.filter((point) => point >= n));
    if ((next - n) * (handled + 1) > MAXIMUM - delta) return null;
    delta += (next - n) * (handled + 1);
    n = next;
    for (const point of points) {
      if (point < n && ++delta > MAXIMUM) return null;
      if (point !== n) continue;
      out += variableLength(delta, bias);
      bias = adapt(delta, handled + 1, handled === basic);
      delta = 0;
      handled++;
    }
    delta++;
    n++;
  }
  return out;
}

module.exports = { punycode };
