'use strict';
// Cache documents for the tests, written as the daemon writes them.

const { STORE, publish } = require('./cases');

const FAR_FUTURE = 4102444800; // 2100-01-01

/** A list entry; `depth` only when not 0, as the daemon writes it. */
function pin(name, fingerprint, { expires = FAR_FUTURE, depth = 0 } = {}) {
  return depth === 0 ? { name, fingerprint, expires } : { name, fingerprint, expires, depth };
}

/** A whole cache file of `store`. */
function cacheDocument(pins, { domainsConfig, mode, store = STORE } = {}) {
  const document = { fingerprints: pins };
  if (domainsConfig !== undefined) document.domainsConfig = domainsConfig;
  document.pinkeeper = { format: 1, store, source: 'https://pins.example.com/list', updated: 1763766400, nextUpdate: 1764374800 };
  if (mode !== undefined) document.pinkeeper.mode = mode;
  return document;
}

/** Publishes a cache file of `pins` in `directory` (a new inode, as the daemon's rename). */
function publishPins(directory, pins, options = {}) {
  publish(directory, JSON.stringify(cacheDocument(pins, options)), options.store ?? STORE);
}

module.exports = { FAR_FUTURE, pin, cacheDocument, publishPins };
