'use strict';
// The shared conformance table (Tests/Conformance/cases.json, format in its README) and how a
// runner writes a case's files.

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const REPOSITORY = path.resolve(__dirname, '..', '..', '..', '..');
const CASES_FILE = path.join(REPOSITORY, 'Tests', 'Conformance', 'cases.json');
const STORE = 'banking';

function loadCases() {
  const table = JSON.parse(fs.readFileSync(CASES_FILE, 'utf8'));
  if (table.format !== 1) throw new Error(`${CASES_FILE}: format ${table.format}, expected 1`);
  return table.cases;
}

/** The bytes of the version under test, or null when the case gives none. */
function versionOf(testCase) {
  if ('cache' in testCase) return Buffer.from(JSON.stringify(testCase.cache));
  if ('cache_text' in testCase) return Buffer.from(testCase.cache_text, 'utf8');
  if ('cache_base64' in testCase) return Buffer.from(testCase.cache_base64, 'base64');
  return null;
}

/** As the daemon publishes: a temporary file renamed over the cache file (a new inode). */
function publish(directory, content, store = STORE) {
  const temporary = path.join(directory, `.${store}.json.tmp`);
  fs.writeFileSync(temporary, content);
  fs.renameSync(temporary, path.join(directory, `${store}.json`));
}

function temporaryDirectory(prefix) {
  return fs.mkdtempSync(path.join(os.tmpdir(), prefix));
}

module.exports = { REPOSITORY, CASES_FILE, STORE, loadCases, versionOf, publish, temporaryDirectory };
