'use strict';
// Strict JSON (RFC 8259), as the Swift reader reads a cache file, so that no two readers can read
// one document differently. JSON.parse alone would keep the last of two equal members, accept
// lone surrogate escapes and read 1.0 or 1e3 where an integer belongs; a Buffer's toString()
// would replace invalid UTF-8 instead of refusing it.

const { PinListError } = require('./errors');

/** The deepest nesting accepted, the document's own object or array counting as 1. */
const MAXIMUM_DEPTH = 512;

/** Stands, in a parsed object, for a member given more than once (parsers disagree on which counts). */
const REPEATED = Symbol('a member given more than once');

/** An integer literal beyond 64 bits: of no type a field is read as. */
const OUT_OF_RANGE = Symbol('an integer beyond 64 bits');

const INT64_MIN = -(1n << 63n);
const INT64_MAX = (1n << 63n) - 1n;

const UTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
const LONE_SURROGATE = /\p{Cs}/u; // with the u flag a well-formed pair is one code point, never matched
const NUMBER = /-?(?:0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?/y;
const ESCAPES = { '"': '"', '\\': '\\', '/': '/', b: '\b', f: '\f', n: '\n', r: '\r', t: '\t' };

function refuse(reason) {
  return new PinListError(`not valid JSON (${reason})`, 'not-json');
}

/**
 * Parses `data` (bytes) as strict JSON: UTF-8 without a byte order mark, no lone surrogate escape,
 * no NaN, Infinity or trailing comma, nothing after the document, at most MAXIMUM_DEPTH levels.
 * Objects become Maps (a member given twice maps to REPEATED), integers written without fraction
 * or exponent become BigInts (OUT_OF_RANGE beyond 64 bits), other numbers Numbers.
 * @param {Uint8Array} data
 */
function parseStrictJSON(data) {
  if (data.length >= 3 && data[0] === 0xef && data[1] === 0xbb && data[2] === 0xbf) {
    throw refuse('starts with a UTF-8 byte order mark');
  }
  let text;
  try {
    text = UTF8.decode(data); // refuses invalid, overlong and surrogate sequences
  } catch {
    throw refuse('invalid UTF-8');
  }
  const parser = new Parser(text);
  parser.skipWhitespace();
  if (parser.at >= text.length) throw refuse('no document');
  const document = parser.value(0);
  parser.skipWhitespace();
  if (parser.at < text.length) throw refuse(`more data after the document at character ${parser.at}`);
  return document;
}

class Parser {
  constructor(text) {
    this.text = text;
    this.at = 0;
  }

  skipWhitespace() {
    const text = this.text;
    while (this.at < text.length) {
      const c = text.charCodeAt(this.at);
      if (c !== 0x20 && c !== 0x09 && c !== 0x0a && c !== 0x0d) return;
      this.at++;
    }
  }

  unexpected() {
    return this.at >= this.text.length ? refuse('unexpected end') : refuse(`unexpected character at ${this.at}`);
  }

  expect(character) {
    this.skipWhitespace();
    if (this.text[this.at] !== character) throw this.unexpected();
    this.at++;
  }

  /** The value at the cursor; `depth` is the number of containers around it. */
  value(depth) {
    this.skipWhitespace();
    const c = this.text[this.at];
    if (c === '{' || c === '[') {
      if (depth >= MAXIMUM_DEPTH) throw refuse(`nested deeper than ${MAXIMUM_DEPTH} levels`);
      return c === '{' ? this.object(depth + 1) : this.array(depth + 1);
    }
    if (c === '"') return this.string();
    if (c === '-' || (c >= '0' && c <= '9')) return this.number();
    for (const [word, result] of [['true', true], ['false', false], ['null', null]]) {
      if (this.text.startsWith(word, this.at)) {
        this.at += word.length;
        return result;
      }
    }
    throw this.unexpected();
  }

  object(depth) {
    this.at++; // {
    const members = new Map();
    this.skipWhitespace();
    if (this.text[this.at] === '}') {
      this.at++;
      return members;
    }
    for (;;) {
      this.skipWhitespace();
      if (this.text[this.at] !== '"') throw this.unexpected();
      const name = this.string();
      this.expect(':');
      const value = this.value(depth);
      members.set(name, members.has(name) ? REPEATED : value);
      this.skipWhitespace();
      const next = this.text[this.at++];
      if (next === '}') return members;
      if (next !== ',') {
        this.at--;
        throw this.unexpected();
      }
    }
  }

  array(depth) {
    this.at++; // [
    const items = [];
    this.skipWhitespace();
    if (this.text[this.at] === ']') {
      this.at++;
      return items;
    }
    for (;;) {
      items.push(this.value(depth));
      this.skipWhitespace();
      const next = this.text[this.at++];
      if (next === ']') return items;
      if (next !== ',') {
        this.at--;
        throw this.unexpected();
      }
    }
  }

  string() {
    const text = this.text;
    let at = this.at + 1; // after the opening quote
    let out = '';
    let start = at;
    for (;;) {
      if (at >= text.length) throw refuse('unterminated string');
      const c = text.charCodeAt(at);
      if (c === 0x22) break;
      if (c < 0x20) throw refuse(`a raw control character in a string at ${at}`);
      if (c !== 0x5c) {
        at++;
        continue;
      }
      out += text.slice(start, at);
      const escape = text[at + 1];
      if (escape === 'u') {
        const hex = text.slice(at + 2, at + 6);
        if (!/^[0-9A-Fa-f]{4}$/.test(hex)) throw refuse(`an invalid \\u escape at ${at}`);
        out += String.fromCharCode(parseInt(hex, 16));
        at += 6;
      } else if (escape !== undefined && Object.hasOwn(ESCAPES, escape)) {
        out += ESCAPES[escape];
        at += 2;
      } else {
        throw refuse(`an invalid escape at ${at}`);
      }
      start = at;
    }
    out += text.slice(start, at);
    this.at = at + 1;
    // The text was valid UTF-8, so a surrogate without its other half came from an escape.
    if (LONE_SURROGATE.test(out)) throw refuse('a lone surrogate escape');
    return out;
  }

  number() {
    NUMBER.lastIndex = this.at;
    const match = NUMBER.exec(this.text);
    if (match === null) throw this.unexpected();
    this.at += match[0].length;
    if (match[1] !== undefined || match[2] !== undefined) return Number(match[0]);
    // 20 characters hold every signed 64-bit integer ("-9223372036854775808").
    if (match[0].length > 20) return OUT_OF_RANGE;
    const value = BigInt(match[0]);
    return value < INT64_MIN || value > INT64_MAX ? OUT_OF_RANGE : value;
  }
}

module.exports = { parseStrictJSON, REPEATED, OUT_OF_RANGE, MAXIMUM_DEPTH };
