'use strict';
// The shared conformance table (Tests/Conformance/cases.json, format in its README) and how a
// runner writes a case's files.

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const REPOSITORY = path.resolve(__dirname, '..', '..', '..', '..');
const CASES_FILE = path.join(REPOSITORY, 'Tests', 'Conformance', 'cases.json');
const STORE = 'banking';

/** The whole table: format 2, checked. */
function loadTable() {
  const table = JSON.parse(fs.readFileSync(CASES_FILE, 'utf8'));
  if (table.format !== 2) throw new Error(`${CASES_FILE}: format ${table.format}, expected 2`);
  return table;
}

function loadCases() {
  return loadTable().cases;
}

/** The bytes of the version under test, or null when the case gives none. */
function versionOf(testCase) {
  if ('cache' in testCase) return Buffer.from(JSON.stringify(testCase.cache));
  if ('cache_text' in testCase) return Buffer.from(testCase.cache_text, 'utf8');
  if ('cache_base64' in testCase) return Buffer.from(testCase.cache_base64, 'base64');
  return null;
}

/** A mode given as octal text in the table ("0644", "1777"), or `otherwise`. */
function modeOf(text, otherwise) {
  return text === undefined ? otherwise : parseInt(text, 8);
}

/**
 * As the daemon publishes: a temporary file, its mode set before the rename, renamed over the
 * cache file (a new inode).
 */
function publish(directory, content, store = STORE, mode = 0o644) {
  const temporary = path.join(directory, `.${store}.json.tmp`);
  fs.writeFileSync(temporary, content);
  fs.chmodSync(temporary, mode); // chmod, not writeFile's mode: the umask would take bits away
  fs.renameSync(temporary, path.join(directory, `${store}.json`));
}

/** A fresh directory of `mode` (the table's default 0755: mkdtemp makes 0700). */
function temporaryDirectory(prefix, mode = 0o755) {
  const made = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  fs.chmodSync(made, mode);
  return made;
}

/**
 * Writes the case's fallback file (`fallback`, with `fallback_mode`) into `directory`, or names
 * one that does not exist (`fallback_missing`); null when the case has none.
 */
function writeFallback(testCase, directory, content = testCase.fallback && JSON.stringify(testCase.fallback)) {
  const file = path.join(directory, 'fallback.json');
  if (testCase.fallback_missing === true) return file;
  if (!('fallback' in testCase)) return null;
  fs.writeFileSync(file, content);
  fs.chmodSync(file, modeOf(testCase.fallback_mode, 0o644));
  return file;
}

module.exports = { REPOSITORY, CASES_FILE, STORE, loadTable, loadCases, versionOf, modeOf, publish, temporaryDirectory, writeFallback };
