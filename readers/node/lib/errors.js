'use strict';

/** Why a list or cache document could not be read, in words that point at the offending field. */
class PinListError extends Error {
  get name() {
    return 'PinListError';
  }
}

/**
 * Why a cache or fallback file could not be used: `kind` "unreadable" (I/O, permissions, not a
 * regular file) or "invalid" (its content), with the path and the reason in one line.
 */
class CacheReaderError extends Error {
  /**
   * @param {'unreadable' | 'invalid'} kind
   * @param {string} path
   * @param {string} reason
   */
  constructor(kind, path, reason) {
    super(`${path} ${reason}`);
    this.kind = kind;
    this.path = path;
    this.reason = reason;
  }

  get name() {
    return 'CacheReaderError';
  }
}

module.exports = { PinListError, CacheReaderError };
