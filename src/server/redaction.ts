// Keeps install paths and URL credentials out of what the servers print or answer.
// Error bodies and log lines reach other machines and CI logs; a file name is enough to debug, a full path is not.
import { homedir, tmpdir } from "node:os";

/** First segments under which POSIX systems keep installs, homes, checkouts and temporary files. */
const FILESYSTEM_ROOTS = [
  "home",
  "Users",
  "usr",
  "opt",
  "srv",
  "var",
  "tmp",
  "root",
  "private",
  "mnt",
  "etc",
  "nix",
  "snap",
  "app",
  "Library",
  "Volumes",
  "run",
  "data",
  "builds",
];

/** The first segments of where this process runs and is installed (working directory, home, temp, package). */
function processRoots(): string[] {
  const roots: string[] = [];
  for (const dir of [process.cwd(), homedir(), tmpdir(), __dirname]) {
    const first = /^\/([^/\s]+)/.exec(dir);
    if (first) roots.push(first[1]);
  }
  return roots;
}

const escapeRegExp = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/**
 * An absolute filesystem path that does not continue a URL or a word: a `C:\` style path, or a POSIX path of two or
 * more segments whose first segment is a filesystem root (above) or one this process runs under. URL paths after
 * `host:port` (preceded by a word character) and the server's own routes (`/sessions/{id}`, `/v1/...`) are kept.
 */
const ABSOLUTE_PATH = new RegExp(
  "(?<![\\w.:/\\\\-])(?:[A-Za-z]:\\\\(?:[^\\s\"'`()<>\\\\:]+\\\\)+|\\/(?:" +
    [...new Set([...FILESYSTEM_ROOTS, ...processRoots()])].map(escapeRegExp).join("|") +
    ")\\/(?:[^\\s\"'`()<>/:]+\\/)*)([^\\s\"'`()<>/\\\\:,;]+)",
  "g",
);

/** Replaces every absolute filesystem path in `text` with its last segment (e.g. `…/models/x.json` → `x.json`). */
export function redactAbsolutePaths(text: string): string {
  return text.replace(ABSOLUTE_PATH, "$1");
}

/** The URL with `user:password@` replaced by `***@` (any other text is returned unchanged). */
export function redactUrlCredentials(url: string): string {
  return url.replace(/^([a-z][a-z0-9+.-]*:\/\/)[^/@\s]*@/i, "$1***@");
}
