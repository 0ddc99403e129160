#!/usr/bin/env node
// Thin launcher: runs the compiled CLI (built by `npm install` via the prepare script).
import { main } from '../dist/cli/main.js';
main(process.argv.slice(2)).then((code) => { process.exitCode = code; });
