// Pulls the files the README shows a newcomer out of README.md, so the pack test runs exactly what the README says.
// A snippet is the first fenced code block after a `<!-- pack-test:<file name> -->` marker.
import { readFileSync } from "node:fs";

/** Every `<!-- pack-test:NAME -->` snippet of `readmePath`, keyed by file name. */
export function readmeSnippets(readmePath: string): Map<string, string> {
  const text = readFileSync(readmePath, "utf8");
  const snippets = new Map<string, string>();
  const marker = /<!--\s*pack-test:([\w./-]+)\s*-->\s*\n```[\w-]*\n([\s\S]*?)\n```/g;
  for (const match of text.matchAll(marker)) {
    if (snippets.has(match[1])) throw new Error(`README.md marks two snippets as ${match[1]}`);
    snippets.set(match[1], `${match[2]}\n`);
  }
  return snippets;
}
