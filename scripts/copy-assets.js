#!/usr/bin/env node
// Copies non-TypeScript assets (chat templates, golden files used at run time) from src/ into dist/src/ (or, for
// the compiled benchmarks, into another build directory).
// tsc only emits .js/.d.ts, so anything read with fs at run time must be copied here.
"use strict";
const fs = require("node:fs");
const path = require("node:path");

const root = path.join(__dirname, "..");
const ASSET_EXTENSIONS = [".jinja", ".json"];

function copyAssets(from, to) {
  if (!fs.existsSync(from)) return;
  for (const entry of fs.readdirSync(from, { withFileTypes: true })) {
    const source = path.join(from, entry.name);
    const target = path.join(to, entry.name);
    if (entry.isDirectory()) copyAssets(source, target);
    else if (ASSET_EXTENSIONS.includes(path.extname(entry.name))) {
      fs.mkdirSync(to, { recursive: true });
      fs.copyFileSync(source, target);
    }
  }
}

module.exports = { copyAssets };

if (require.main === module) copyAssets(path.join(root, "src"), path.join(root, "dist", "src"));
