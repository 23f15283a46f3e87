#!/usr/bin/env node
'use strict';
// `pinkeeper-reader validate …`: see lib/validate-command.js and README.md.

// The exit status is set rather than exit() called, so that piped output is written in full.
process.exitCode = require('../lib/validate-command').run(process.argv.slice(2));
