'use strict';
// Test-only preload (node --require): fixes Date.now at PINKEEPER_TEST_NOW (Unix seconds), the
// "now" of a conformance case, for the command line under test. The shipped command has no way
// to set its time; this file is never part of the package (package.json "files").

const seconds = Number(process.env.PINKEEPER_TEST_NOW);
if (!Number.isSafeInteger(seconds)) throw new Error(`PINKEEPER_TEST_NOW must be Unix seconds, not '${process.env.PINKEEPER_TEST_NOW}'`);
Date.now = () => seconds * 1000;
