// Keeps install paths and URL credentials out of what the servers print or answer.
// Error bodies and log lines reach other machines and CI logs; a file name is enough to debug, a full path is not.

/**
 * A run of two or more `/segment`s (or a `C:\` style path) that does not continue a URL or a word: an absolute
 * filesystem path. URL paths after `host:port` are not matched (preceded by a word character).
 */
const ABSOLUTE_PATH = /(?<![\w.:/\\-])(?:[A-Za-z]:\\(?:[^\s"'`()<>\\:]+\\)+|(?:\/[^\s"'`()<>/:]+)+\/)([^\s"'`()<>/\\:,;]+)/g;

/** Replaces every absolute filesystem path in `text` with its last segment (e.g. `…/models/x.json` → `x.json`). */
export function redactAbsolutePaths(text: string): string {
  return text.replace(ABSOLUTE_PATH, "$1");
}

/** The URL with `user:password@` replaced by `***@` (any other text is returned unchanged). */
export function redactUrlCredentials(url: string): string {
  return url.replace(/^([a-z][a-z0-9+.-]*:\/\/)[^/@\s]*@/i, "$1***@");
}
