// The package is CommonJS; ES modules import it by name with named exports.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import reader, {
  CacheReader, ERROR_CODES, PinnedAgent, PinningError, Verdict, canonicalHost, connect, connector, tlsOptions,
} from 'pinkeeper-reader';

test('named and default imports from an ES module', () => {
  assert.equal(typeof CacheReader.forStore, 'function');
  assert.equal(typeof PinnedAgent, 'function');
  assert.equal(Verdict.EMPTY, 'empty');
  for (const helper of [connect, connector, tlsOptions]) assert.equal(typeof helper, 'function');
  assert.equal(new PinningError('x').name, 'PinningError');
  assert.equal(reader.CacheReader, CacheReader);
  assert.equal(canonicalHost('[0:0::1]'), '::1');
  assert.equal(ERROR_CODES['insecure-permissions'], 'unreadable');
});
