'use strict';
// One store's published cache file plus its fallback pins and expected names, followed as the
// daemon replaces it (docs/cache-format.md).

const crypto = require('node:crypto');
const fs = require('node:fs');
const path = require('node:path');
const { CacheReaderError, PinListError } = require('./errors');
const { escaped, foldName, peerNames, peerKeys } = require('./names');
const { CacheFile, parsePinList } = require('./pin-list');
const { admits, decide, atDepth, inChain } = require('./validator');

/** Where the daemon publishes when its configuration does not say otherwise. */
const DEFAULT_CACHE_DIRECTORY = '/var/cache/pinkeeper';
/** A cache file is a few hundred bytes per pin; anything this large is not one. */
const MAXIMUM_FILE_SIZE = 64 * 1024 * 1024;
const STORE_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;
const WRITABLE_BY_OTHERS = 0o002;
const STICKY = 0o1000;

/** The current time in Unix seconds, as the pins' `expires`. */
function nowSeconds() {
  return BigInt(Math.floor(Date.now() / 1000));
}

function asSeconds(now) {
  if (now === undefined) return nowSeconds();
  if (typeof now === 'bigint') return now;
  if (typeof now === 'number' && Number.isFinite(now)) return BigInt(Math.floor(now));
  throw new TypeError('now is Unix seconds (a number or a BigInt)');
}

function asDigest(fingerprint) {
  if (!(fingerprint instanceof Uint8Array) || fingerprint.length !== 32) {
    throw new TypeError('a fingerprint is the 32-byte SHA-256 digest of a DER certificate');
  }
  return Buffer.from(fingerprint.buffer, fingerprint.byteOffset, 32);
}

function sha256(der) {
  return crypto.createHash('sha256').update(der).digest();
}

/**
 * What identifies one version of the file: device, inode, size and modification time, and its
 * mode, so that a file made writable by others is looked at (and refused) again.
 */
function versionOf(info) {
  return { dev: info.dev, ino: info.ino, size: info.size, mtimeNs: info.mtimeNs, mode: info.mode };
}

/**
 * Whether a BigInt stat is the version `seen` (a sentinel string, 'missing' or 'failed:…', never
 * is). Compared field by field: building a string of four BigInts at every question cost more
 * than the rest of a verdict on Node 18.
 */
function isVersion(seen, info) {
  return (
    typeof seen === 'object' &&
    seen.mtimeNs === info.mtimeNs &&
    seen.ino === info.ino &&
    seen.size === info.size &&
    seen.dev === info.dev &&
    seen.mode === info.mode
  );
}

function isSymlink(file) {
  try {
    return fs.lstatSync(file).isSymbolicLink();
  } catch {
    return false;
  }
}

/**
 * The whole file and the identity of what was read (from the open descriptor, so that a
 * replacement racing with the read is noticed at the next question); null when it does not
 * exist. Opened with O_NONBLOCK and used only when the descriptor is a regular file: a FIFO or
 * device planted at the path is refused, never waited on. A symlink is refused (O_NOFOLLOW)
 * unless `followSymlink`, which only the operator's fallback file gets.
 */
function readRegularFile(file, followSymlink) {
  const { O_RDONLY, O_NONBLOCK, O_NOFOLLOW } = fs.constants;
  let fd;
  try {
    fd = fs.openSync(file, O_RDONLY | O_NONBLOCK | (followSymlink ? 0 : O_NOFOLLOW));
  } catch (error) {
    if (error.code === 'ENOENT') return null;
    if (!followSymlink && error.code === 'ELOOP' && isSymlink(file)) {
      throw new CacheReaderError('symlink', file,
        'is a symlink, which is never followed; remove it and let the daemon publish the file there');
    }
    throw new CacheReaderError('io-error', file, `cannot be opened (${error.code ?? error.message}); check the path and its permissions`);
  }
  try {
    const info = fs.fstatSync(fd, { bigint: true });
    if (!info.isFile()) {
      throw new CacheReaderError('not-regular-file', file, 'is not a regular file (a FIFO, device or directory?); remove it');
    }
    checkPermissions(file, info, followSymlink);
    return { data: readAll(fd, file, info), identity: versionOf(info) };
  } finally {
    fs.closeSync(fd);
  }
}

/**
 * Refuses a file that users other than its owner and group may write, or one in a directory
 * they may write without the sticky bit (they could rename their own file over it): either way a
 * local user could plant pins. `info` is the fstat of the open descriptor, so what is checked is
 * what is read. A fallback file reached through a symlink has its target's directory checked too.
 */
function checkPermissions(file, info, followSymlink) {
  const insecure = (what) => new CacheReaderError('insecure-permissions', file,
    `${what}, so any local user could plant pins; remove write access for others (chmod o-w)`);
  if (Number(info.mode) & WRITABLE_BY_OTHERS) throw insecure('is writable by other users');
  const directories = new Set([path.dirname(file)]);
  if (followSymlink) directories.add(path.dirname(realPath(file)));
  for (const directory of directories) {
    let mode;
    try {
      mode = fs.statSync(directory).mode;
    } catch (error) {
      throw new CacheReaderError('io-error', file,
        `has a directory that cannot be examined (${error.code ?? error.message}); check its permissions`);
    }
    if (mode & WRITABLE_BY_OTHERS && !(mode & STICKY)) {
      throw insecure(`is in ${directory}, which other users may write without the sticky bit`);
    }
  }
}

function realPath(file) {
  try {
    return fs.realpathSync(file);
  } catch (error) {
    throw new CacheReaderError('io-error', file,
      `cannot be resolved (${error.code ?? error.message}); check the symlink and what it names`);
  }
}

/** The whole content of the open descriptor `fd`, at most MAXIMUM_FILE_SIZE bytes. */
function readAll(fd, file, info) {
  const tooLarge = () => new CacheReaderError('too-large', file,
    `is larger than ${MAXIMUM_FILE_SIZE} bytes, which no pin list is; replace it`);
  if (info.size > BigInt(MAXIMUM_FILE_SIZE)) throw tooLarge();
  const chunks = [];
  let total = 0;
  for (;;) {
    const chunk = Buffer.allocUnsafe(65536);
    let count;
    try {
      count = fs.readSync(fd, chunk, 0, chunk.length, null);
    } catch (error) {
      throw new CacheReaderError('io-error', file, `cannot be read (${error.code ?? error.message}); check the disk`);
    }
    if (count === 0) break;
    total += count;
    if (total > MAXIMUM_FILE_SIZE) throw tooLarge();
    chunks.push(chunk.subarray(0, count));
  }
  return Buffer.concat(chunks, total);
}

/**
 * The pins of a Wultra fallback list (`{"fingerprints": [...]}`); its domainsConfig is ignored,
 * as the mobile clients ignore it in fallback data. Unlike the cache file it may be a symlink
 * (the operator placed it), but what it names must be a regular file.
 * @param {string} file
 */
function readFallback(file) {
  const read = readRegularFile(file, true);
  if (read === null) throw new CacheReaderError('missing', file, 'does not exist; give the path of the store\'s fallback file');
  try {
    return parsePinList(read.data).pins;
  } catch (error) {
    if (!(error instanceof PinListError)) throw error;
    throw new CacheReaderError(error.code, file, `is not a Wultra fingerprint list: ${error.message}; correct the fallback file`);
  }
}

/**
 * Answers "may I trust this TLS peer?" for a long-running process, from one store's cache file
 * plus its fallback pins, by the host the client verified (H) and the leaf's common name (N).
 *
 * Every question first lstats the file; it is read and parsed again only when its device, inode,
 * size or modification time changed (the daemon replaces it atomically, so every version is a
 * new inode). A missing file means no cached pins. A version that cannot be used (invalid, a
 * symlink, a FIFO…) leaves the last good pins in use, and `snapshot().problem` says why.
 */
class CacheReader {
  #identity; // the version last looked at (versionOf), 'missing' or 'failed:…'; undefined before the first look
  #cache = null; // the version answers come from (null: no cached pins)
  #problem = null; // why the version at the path is not in use
  #byKey = new Map(); // cached pins in force, then fallback pins, by folded name
  #expected; // folded expected names, or null

  /**
   * Opens a cache file. A missing file is fine (every answer is then empty unless a fallback pin
   * matches); a file that exists but cannot be used throws a CacheReaderError.
   * @param {string} file
   * @param {{ store?: string | null, fallbackPins?: object[], expectedCommonNames?: string[] | null }} [options]
   *   store: when given, the file's `pinkeeper.store` must name it; expectedCommonNames: the
   *   store's `expected_common_names` (null: any name)
   */
  constructor(file, { store = null, fallbackPins = [], expectedCommonNames = null } = {}) {
    this.path = file;
    this.store = store;
    this.fallbackPins = Object.freeze([...fallbackPins]);
    this.expectedCommonNames = expectedCommonNames === null ? null : Object.freeze([...expectedCommonNames].map(String));
    this.#expected = this.expectedCommonNames === null ? null : new Set(this.expectedCommonNames.map(foldName));
    this.#use(null);
    this.#look();
    if (this.#problem !== null) throw this.#problem;
  }

  /**
   * `<cacheDirectory>/<store>.json` with the pins of the store's fallback file (if any) and its
   * expected common names (null: any name).
   * @param {string} store
   * @param {{ cacheDirectory?: string, fallbackFile?: string | null, expectedCommonNames?: string[] | null }} [options]
   */
  static forStore(store, { cacheDirectory = DEFAULT_CACHE_DIRECTORY, fallbackFile = null, expectedCommonNames = null } = {}) {
    if (typeof store !== 'string' || !STORE_ID.test(store)) {
      throw new TypeError(`a store id matches [A-Za-z0-9][A-Za-z0-9._-]{0,63}, not '${store}'`);
    }
    const fallbackPins = fallbackFile === null ? [] : readFallback(fallbackFile);
    return new CacheReader(path.join(cacheDirectory, `${store}.json`), { store, fallbackPins, expectedCommonNames });
  }

  // Questions. `peer` is H as a string, or { host, commonName } (see names.js); `now` is Unix
  // seconds (default: the current time).

  /** One certificate's raw SHA-256 digest, presented at `depth` (0 = leaf) of the verified chain. */
  verdict(peer, fingerprint, depth = 0, now = undefined) {
    if (!Number.isSafeInteger(depth) || depth < 0) throw new TypeError('depth is 0 (leaf) or more');
    return this.#decide(peer, now, atDepth(asDigest(fingerprint), BigInt(depth)));
  }

  /**
   * The SHA-256 digests of the VERIFIED chain, leaf first: each pin is compared with the
   * certificate at its depth, pins deeper than the chain are skipped. Never the certificates a
   * server merely presented: it may append any certificate it likes.
   */
  verdictForChainDigests(peer, digests, now = undefined) {
    return this.#decide(peer, now, inChain(digests.map(asDigest)));
  }

  /** The verified chain as DER certificates, leaf first (see verdictForChainDigests). */
  verdictForChain(peer, ders, now = undefined) {
    return this.verdictForChainDigests(peer, ders.map(sha256), now);
  }

  /** Whether the expected common names (if any) admit H or N; when they do not, every answer is untrusted. */
  admits(peer) {
    return admits(peerKeys(peerNames(peer)), this.#expected);
  }

  /** Looks at the file (reading a new version) and returns what answers come from. */
  snapshot() {
    this.#look();
    return { cache: this.#cache, fallbackPins: this.fallbackPins, problem: this.#problem };
  }

  /** Looks at the file now and throws if its current version cannot be used. */
  refresh() {
    this.#look();
    if (this.#problem !== null) throw this.#problem;
  }

  #decide(peer, now, matches) {
    const at = asSeconds(now);
    const keys = peerKeys(peerNames(peer));
    this.#look();
    // The names differ once folded, so their pin lists never share a pin.
    const pins = keys.flatMap((key) => this.#byKey.get(key) ?? []);
    return decide(pins, keys, this.#expected, this.#cache?.domainsConfigInForce ?? null, at, matches);
  }

  /** Reads the file again if its identity changed since the last look. */
  #look() {
    let identity;
    try {
      // The link itself, never its target: a symlink at the path is a version of its own.
      const info = fs.lstatSync(this.path, { bigint: true, throwIfNoEntry: false });
      if (info !== undefined && isVersion(this.#identity, info)) return;
      identity = info === undefined ? 'missing' : versionOf(info);
    } catch (error) {
      identity = `failed:${error.code ?? error.message}`;
    }
    if (identity === this.#identity) return;
    if (identity === 'missing') {
      this.#identity = identity;
      this.#use(null);
      return;
    }
    if (typeof identity === 'string' && identity.startsWith('failed:')) {
      this.#identity = identity;
      this.#problem = new CacheReaderError('io-error', this.path, `cannot be examined (${identity.slice(7)}); check its directory`);
      return;
    }
    try {
      const read = readRegularFile(this.path, false);
      if (read === null) {
        this.#identity = 'missing';
        this.#use(null);
        return;
      }
      this.#identity = read.identity;
      this.#use(this.#parse(read.data));
    } catch (error) {
      if (!(error instanceof CacheReaderError)) throw error;
      // Keep answering from the last good version; remember this one so that it is not read
      // again at every question, and say why it was refused.
      this.#identity = identity;
      this.#problem = error;
    }
  }

  #parse(data) {
    let cache;
    try {
      cache = CacheFile.parse(data);
    } catch (error) {
      if (!(error instanceof PinListError)) throw error;
      const remedy = error.code === 'unsupported-format' ? 'a newer reader reads it' : 'publish a good version with `pinkeeper update`';
      throw new CacheReaderError(error.code, this.path, `is not a pinkeeper cache file: ${error.message}; ${remedy}`);
    }
    if (this.store !== null && cache.metadata.store !== this.store) {
      throw new CacheReaderError('wrong-store', this.path,
        `belongs to store '${escaped(cache.metadata.store)}', not '${this.store}'; check the daemon's cache_directory`);
    }
    return cache;
  }

  /** Answers from `cache` (null: no cached pins) from now on; pins indexed by folded name. */
  #use(cache) {
    this.#cache = cache;
    this.#problem = null;
    this.#byKey = new Map();
    for (const pin of [...(cache?.pinsInForce ?? []), ...this.fallbackPins]) {
      const list = this.#byKey.get(pin.key);
      if (list) list.push(pin);
      else this.#byKey.set(pin.key, [pin]);
    }
  }
}

module.exports = { CacheReader, readFallback, nowSeconds, sha256, DEFAULT_CACHE_DIRECTORY, MAXIMUM_FILE_SIZE, STORE_ID };
