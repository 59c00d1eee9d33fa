// Pulls the files the README and the docs pages show a newcomer out of them, so the pack test runs exactly what they say.
// A snippet is the first fenced code block after a `<!-- pack-test:<file name> -->` marker, on any of those pages.
import { readFileSync } from "node:fs";
import * as path from "node:path";
import { userPages } from "../docs/pages";

/** Every `<!-- pack-test:NAME -->` snippet of the README and `docs/*.md` under `root`, keyed by file name. */
export function readmeSnippets(root: string): Map<string, string> {
  const snippets = new Map<string, string>();
  const marker = /<!--\s*pack-test:([\w./-]+)\s*-->\s*\n```[\w-]*\n([\s\S]*?)\n```/g;
  for (const page of userPages()) {
    const text = readFileSync(path.join(root, page), "utf8");
    for (const match of text.matchAll(marker)) {
      if (snippets.has(match[1])) throw new Error(`${page} marks a second snippet as ${match[1]}`);
      snippets.set(match[1], `${match[2]}\n`);
    }
  }
  return snippets;
}
