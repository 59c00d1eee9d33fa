// This package's version, read from the nearest jest-session-parity package.json: /health and `run` reports show it.
// The same lookup works from the sources (src/server) and from the build (dist/src/server).
import { readFileSync } from "node:fs";
import * as path from "node:path";

let cachedVersion: string | null = null;

/** This package's version, read from its package.json (the same lookup works from src/ and from dist/). */
export function packageVersion(): string {
  if (cachedVersion !== null) return cachedVersion;
  let dir = __dirname;
  for (;;) {
    try {
      const manifest = JSON.parse(readFileSync(path.join(dir, "package.json"), "utf8")) as { name?: string; version?: string };
      if (manifest.name === "jest-session-parity" && typeof manifest.version === "string") return (cachedVersion = manifest.version);
    } catch {
      // no manifest here; keep walking up
    }
    const parent = path.dirname(dir);
    if (parent === dir) return (cachedVersion = "unknown");
    dir = parent;
  }
}
