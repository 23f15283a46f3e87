#!/usr/bin/env node
'use strict';
// Node reader benchmark (docs/performance.md "How cost grows"), not a test: the same 2,000-pin
// store and the same questions as scripts/bench-reader-python.py and readers/go/bench_test.go.
// Prints the cost of one question on an unchanged file (its lstat included) and of the first
// question after the file was replaced (lstat, read, parse, index).
// Usage: node readers/node/bench/reader-bench.js [SECONDS]   (default 3)

const assert = require('node:assert');
const crypto = require('node:crypto');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { CacheReader, Verdict } = require('../lib');

const NAMES = 1000;
const NOW = 1763770000;

function digest(i, j) {
  return crypto.createHash('sha256').update(`cert-${i}-${j}`).digest();
}

function hostName(i) {
  return `host${String(i).padStart(4, '0')}.example.com`;
}

function cacheFile(updated) {
  const entries = [];
  for (let i = 0; i < NAMES; i++) {
    for (let j = 0; j < 2; j++) {
      entries.push(`    {"name": "${hostName(i)}", "fingerprint": "${digest(i, j).toString('base64')}", ` +
        `"expires": ${4102444800 - j * 86400}}`);
    }
  }
  return Buffer.from('{\n  "fingerprints": [\n' + entries.join(',\n') + '\n  ],\n' +
    '  "pinkeeper": {"format": 1, "store": "bench", "source": "https://pins.example.com/bench", ' +
    `"updated": ${updated}, "nextUpdate": 4102000000}\n}\n`);
}

/** Publishes data as the daemon does: a new file renamed over the old one (a new inode). */
function replace(file, data) {
  fs.writeFileSync(`${file}.tmp`, data);
  fs.renameSync(`${file}.tmp`, file);
}

/** A third trusted, a third untrusted, a third for a name without pins. */
function questions() {
  const list = [];
  for (let index = 0; index < 999; index++) {
    const i = (index * 7) % NAMES;
    const j = index % 2;
    list.push([
      [hostName(i), digest(i, j)],
      [hostName(i), Buffer.alloc(32, 0xee)],
      [`unknown-${index}.example.com`, digest(i, j)],
    ][index % 3]);
  }
  return list;
}

function seconds(start) {
  return Number(process.hrtime.bigint() - start) / 1e9;
}

function askAll(reader, list) {
  for (const [host, fingerprint] of list) reader.verdict(host, fingerprint, 0, NOW);
}

/** The mean cost of one question over `duration` seconds, in µs. */
function verdictCost(reader, list, duration) {
  let count = 0;
  const start = process.hrtime.bigint();
  while (seconds(start) < duration) {
    askAll(reader, list);
    count += list.length;
  }
  return (seconds(start) / count) * 1e6;
}

/** The mean cost of the first question after a replacement over `duration` seconds, in ms. */
function reloadCost(reader, file, first, duration) {
  const versions = [cacheFile(NOW + 1), cacheFile(NOW + 2)];
  let reloads = 0;
  let spent = 0n;
  const start = process.hrtime.bigint();
  while (seconds(start) < duration) {
    replace(file, versions[reloads % 2]);
    const t = process.hrtime.bigint();
    const verdict = reader.verdict(first[0], first[1], 0, NOW);
    spent += process.hrtime.bigint() - t;
    assert.strictEqual(verdict, Verdict.TRUSTED);
    reloads++;
  }
  return Number(spent) / reloads / 1e6;
}

function main() {
  const duration = Number(process.argv[2] ?? 3);
  const directory = fs.mkdtempSync(path.join(os.tmpdir(), 'pinkeeper-bench-'));
  try {
    const file = path.join(directory, 'bench.json');
    replace(file, cacheFile(NOW));
    const reader = new CacheReader(file, { store: 'bench' });
    const list = questions();
    assert.strictEqual(reader.verdict(list[0][0], list[0][1], 0, NOW), Verdict.TRUSTED);
    // V8 compiles the hot paths after a few thousand calls: warm both paths up untimed first.
    verdictCost(reader, list, Math.min(1, duration / 3));
    reloadCost(reader, file, list[0], Math.min(1, duration / 3));
    const question = verdictCost(reader, list, duration);
    console.log(`node: verdict, 2,000 pins, unchanged file (lstat included): ${question.toFixed(2)} µs per question (goal <= 5)`);
    const reload = reloadCost(reader, file, list[0], duration);
    console.log(`node: first question after the file was replaced, 2,000 pins: ${reload.toFixed(2)} ms (goal <= 5)`);
  } finally {
    fs.rmSync(directory, { recursive: true, force: true });
  }
}

main();
