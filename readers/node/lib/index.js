'use strict';
// pinkeeper-reader: the pins the pinkeeper daemon publishes, checked from Node (README.md).

const { CacheReader, readFallback, DEFAULT_CACHE_DIRECTORY } = require('./cache-reader');
const { commonName } = require('./certificate');
const { CacheReaderError, PinListError, ERROR_CODES } = require('./errors');
const { canonicalHost } = require('./host');
const { foldName, sameName } = require('./names');
const { parsePinList } = require('./pin-list');
const { PinningError, HAS_VERIFIED_CHAIN, tlsOptions, connect, PinnedAgent, connector } = require('./tls');
const { Verdict } = require('./validator');

module.exports = {
  CacheReader,
  CacheReaderError,
  PinListError,
  ERROR_CODES,
  canonicalHost,
  Verdict,
  readFallback,
  parsePinList,
  commonName,
  foldName,
  sameName,
  DEFAULT_CACHE_DIRECTORY,
  PinningError,
  HAS_VERIFIED_CHAIN,
  tlsOptions,
  connect,
  PinnedAgent,
  connector,
};
