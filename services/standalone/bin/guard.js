#!/usr/bin/env node
// Thin shim: the CLI is compiled TypeScript (npm install runs the build through "prepare").
import '../dist/cli.js';
