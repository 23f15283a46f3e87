'use strict';
// How every pinkeeper reader compares and prints names (docs/protocol.md, "the host decides").

const { canonicalHost } = require('./host');

/**
 * `name` with the ASCII letters A–Z folded to a–z and nothing else changed: two names are the
 * same name when their folds are equal. Not toLowerCase(), which folds more than DNS does (the
 * Kelvin sign U+212A stays a different name from "k"), and no normalisation: "é" and "e" +
 * U+0301 are two names, as in the Swift, Python and Java readers.
 * @param {string} name
 * @returns {string}
 */
function foldName(name) {
  return name.replace(/[A-Z]+/g, (letters) => letters.toLowerCase());
}

/** Whether `a` and `b` are the same name. */
function sameName(a, b) {
  return foldName(a) === foldName(b);
}

// The code points printed as escapes, as the Swift command's LogText writes them: C0 controls,
// backslash, DEL and C1, the line and paragraph separators, the bidirectional marks and overrides.
const NEEDS_ESCAPE = /[\u0000-\u001f\\\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/u;
const SHORT_ESCAPES = { '\\': '\\\\', '\n': '\\n', '\r': '\\r', '\t': '\\t' };

/**
 * `text` safe in one line of a message: a name comes from a certificate or a cache file and must
 * not forge or hide lines of a log or terminal.
 * @param {string} text
 */
function escaped(text) {
  if (!NEEDS_ESCAPE.test(text)) return text;
  let out = '';
  for (const character of text) {
    if (!NEEDS_ESCAPE.test(character)) out += character;
    else out += SHORT_ESCAPES[character] ?? `\\u{${character.codePointAt(0).toString(16)}}`;
  }
  return out;
}

/**
 * The two names a peer is judged by: `host` (H), the host the client connected to and had the
 * platform verify the certificate for, and `commonName` (N), the leaf's most specific common
 * name when the certificate is known. A string is H alone. H always takes part; N may add pins
 * to compare but never lifts a requirement that H has.
 * @typedef {string | { host: string, commonName?: string | null }} Peer
 */

/**
 * The names a verdict consults. This is the one place H is put in its one form (host.js), for
 * every question of every API: `host` is that form, or null when the spelling is refused (then
 * nothing is looked up and the answer is untrusted); `spelled` is H as it was handed over.
 * @returns {{ host: string | null, spelled: string, commonName: string | null }}
 */
function peerNames(peer) {
  if (typeof peer === 'string') return { host: canonicalHost(peer), spelled: peer, commonName: null };
  if (peer === null || typeof peer !== 'object') throw new TypeError('a peer is a host name or { host, commonName }');
  const spelled = peer.host == null ? '' : String(peer.host);
  return { host: canonicalHost(spelled), spelled, commonName: peer.commonName == null ? null : String(peer.commonName) };
}

/** The folded names to consult: H, then N unless it is the same name; none without H (N is never consulted alone). */
function peerKeys(names) {
  if (names.host === null) return [];
  const host = names.host; // already folded: the one form has no ASCII capitals
  if (names.commonName === null) return [host];
  const common = foldName(names.commonName);
  return common === host ? [host] : [host, common];
}

/** For messages: `'host'`, or `'host' (certificate common name 'N')` when N is another name; escaped. */
function describePeer(names) {
  const host = `'${escaped(names.host ?? names.spelled)}'`;
  if (names.commonName === null || sameName(names.host ?? names.spelled, names.commonName)) return host;
  return `${host} (certificate common name '${escaped(names.commonName)}')`;
}

module.exports = { foldName, sameName, escaped, peerNames, peerKeys, describePeer };
