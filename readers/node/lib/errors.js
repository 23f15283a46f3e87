'use strict';

/**
 * Every code a pinkeeper reader reports for a file it cannot use, and its kind: `unreadable`
 * (what sits at the path, its permissions, I/O) or `invalid` (its content). The same codes and
 * kinds in every reader (Tests/Conformance/cases.json, `error_codes`).
 */
const ERROR_CODES = Object.freeze({
  missing: 'unreadable',
  symlink: 'unreadable',
  'not-regular-file': 'unreadable',
  'io-error': 'unreadable',
  'insecure-permissions': 'unreadable',
  'too-large': 'invalid',
  'not-json': 'invalid',
  'invalid-content': 'invalid',
  'missing-metadata': 'invalid',
  'unsupported-format': 'invalid',
  'wrong-store': 'invalid',
});

function kindOf(code) {
  if (!Object.hasOwn(ERROR_CODES, code)) throw new TypeError(`'${code}' is not a pinkeeper error code`);
  return ERROR_CODES[code];
}

/**
 * Why a list or cache document could not be read, in words that point at the offending field;
 * `code` is one of the `invalid` codes of ERROR_CODES.
 */
class PinListError extends Error {
  /**
   * @param {string} message
   * @param {'not-json' | 'invalid-content' | 'missing-metadata' | 'unsupported-format'} [code]
   */
  constructor(message, code = 'invalid-content') {
    super(message);
    kindOf(code);
    this.code = code;
  }

  get name() {
    return 'PinListError';
  }
}

/**
 * Why a cache or fallback file could not be used: its `code` (ERROR_CODES), the `kind` of that
 * code, the path and the reason in one line.
 */
class CacheReaderError extends Error {
  /**
   * @param {keyof typeof ERROR_CODES} code
   * @param {string} path
   * @param {string} reason
   */
  constructor(code, path, reason) {
    super(`${path} ${reason}`);
    this.kind = kindOf(code);
    this.code = code;
    this.path = path;
    this.reason = reason;
  }

  get name() {
    return 'CacheReaderError';
  }
}

module.exports = { ERROR_CODES, PinListError, CacheReaderError };
