'use strict';
// H in one spelling (docs/protocol.md, "H in one spelling"): every verdict first puts the host a
// client handed over in this form, so that no second spelling of a name or address can reach
// other pins or another domainsConfig entry. Written here rather than taken from net.isIP, URL or
// url.domainToASCII: those accept zone ids and octal or short IPv4 forms, or apply IDNA mapping,
// and each of them would let a spelling that the table refuses through.

const { punycode } = require('./punycode');

const DIGITS = /^[0-9]+$/;
const HEX_GROUP = /^[0-9A-Fa-f]{1,4}$/;
const DECIMAL_PART = /^(?:0|[1-9][0-9]{0,2})$/;
// Dots that IDNA would map to '.': refused rather than read as a label separator or kept.
const MAPPED_DOTS = /[\u3002\uff0e\uff61]/;
// Already in the one form: lower-case ASCII labels, none empty, the last neither numeric nor 0x….
const PLAIN_NAME = /^(?:[a-z0-9_*-]+\.)*(?![0-9]+$)(?!0x)[a-z0-9_*-]+$/;
const LONE_SURROGATE = /\p{Cs}/u;
const ASCII = /^[\u0000-\u007f]*$/;

/**
 * The one form of the host `name`, or null when it is refused (never looked up: the verdict is
 * untrusted and a TLS helper refuses the connection). IP literals in their canonical text (IPv6
 * as RFC 5952 writes it), a DNS name without one trailing dot, with its ASCII letters in lower
 * case and each label holding other characters as its Punycode A-label, taken as written.
 * @param {unknown} name
 * @returns {string | null}
 */
function canonicalHost(name) {
  if (typeof name !== 'string' || name === '') return null;
  if (PLAIN_NAME.test(name)) return name; // the common case, asked at every question
  if (name.startsWith('[')) return name.endsWith(']') ? canonicalIPv6(name.slice(1, -1)) : null;
  if (name.includes(':')) return canonicalIPv6(name);
  if (looksLikeIPv4(name)) return ipv4Parts(name) === null ? null : name;
  return canonicalDNSName(name);
}

/** Whether `name` is to be read as an IPv4 literal: its last label numeric or 0x…, or only digits and dots. */
function looksLikeIPv4(name) {
  const once = name.endsWith('.') ? name.slice(0, -1) : name;
  const last = once.slice(once.lastIndexOf('.') + 1);
  if (DIGITS.test(last) || last.startsWith('0x') || last.startsWith('0X')) return true;
  return /^[0-9.]+$/.test(name);
}

/** The four numbers of a dotted IPv4 address in the one form (each 0–255 without a leading zero), or null. */
function ipv4Parts(text) {
  const parts = text.split('.');
  if (parts.length !== 4) return null;
  const numbers = [];
  for (const part of parts) {
    if (!DECIMAL_PART.test(part)) return null;
    const value = Number(part);
    if (value > 255) return null;
    numbers.push(value);
  }
  return numbers;
}

/**
 * The eight 16-bit groups of an IPv6 literal as inet_pton(AF_INET6) reads it (groups of one to
 * four hex digits, at most one `::`, a dotted IPv4 address at the end), with the IPv4 part in the
 * one form; null for anything else, a zone id included.
 */
function ipv6Groups(text) {
  if (text.includes('%')) return null;
  const halves = text.split('::');
  if (halves.length > 2) return null;
  const head = groupsOf(halves[0], halves.length === 1);
  const tail = halves.length === 2 ? groupsOf(halves[1], true) : [];
  if (head === null || tail === null) return null;
  if (halves.length === 1) return head.length === 8 ? head : null;
  if (head.length + tail.length > 7) return null; // `::` stands for one zero group at least
  return [...head, ...new Array(8 - head.length - tail.length).fill(0), ...tail];
}

/** The groups of one side of `::` (an empty side has none); a dotted IPv4 part only where `mayEndInIPv4`. */
function groupsOf(side, mayEndInIPv4) {
  if (side === '') return [];
  const pieces = side.split(':');
  const groups = [];
  for (let index = 0; index < pieces.length; index++) {
    const piece = pieces[index];
    if (mayEndInIPv4 && index === pieces.length - 1 && piece.includes('.')) {
      const ipv4 = ipv4Parts(piece);
      if (ipv4 === null) return null;
      groups.push(ipv4[0] * 256 + ipv4[1], ipv4[2] * 256 + ipv4[3]);
    } else if (HEX_GROUP.test(piece)) {
      groups.push(parseInt(piece, 16));
    } else {
      return null;
    }
  }
  return groups;
}

/** RFC 5952 text of an IPv6 literal, `::ffff:a.b.c.d` for an IPv4-mapped address; null when refused. */
function canonicalIPv6(text) {
  const groups = ipv6Groups(text);
  if (groups === null) return null;
  if (groups.slice(0, 5).every((group) => group === 0) && groups[5] === 0xffff) {
    return `::ffff:${groups[6] >> 8}.${groups[6] & 255}.${groups[7] >> 8}.${groups[7] & 255}`;
  }
  const run = longestZeroRun(groups);
  const hex = (list) => list.map((group) => group.toString(16)).join(':');
  if (run === null) return hex(groups);
  return `${hex(groups.slice(0, run.start))}::${hex(groups.slice(run.start + run.length))}`;
}

/** The first longest run of two or more zero groups, or null. */
function longestZeroRun(groups) {
  let best = null;
  for (let start = 0; start < groups.length; start++) {
    if (groups[start] !== 0) continue;
    let length = 1;
    while (start + length < groups.length && groups[start + length] === 0) length++;
    if (length >= 2 && (best === null || length > best.length)) best = { start, length };
    start += length;
  }
  return best;
}

/** A DNS name in the one form: one trailing dot dropped, ASCII capitals lowered, non-ASCII labels as A-labels. */
function canonicalDNSName(name) {
  if (MAPPED_DOTS.test(name) || LONE_SURROGATE.test(name)) return null;
  const once = name.endsWith('.') ? name.slice(0, -1) : name;
  const labels = once.split('.');
  if (labels.some((label) => label === '')) return null;
  const spelled = [];
  for (const label of labels) {
    const lowered = label.replace(/[A-Z]+/g, (letters) => letters.toLowerCase());
    if (ASCII.test(lowered)) {
      spelled.push(lowered);
      continue;
    }
    const encoded = punycode(lowered);
    if (encoded === null) return null;
    spelled.push(`xn--${encoded}`);
  }
  return spelled.join('.');
}

module.exports = { canonicalHost };
