// The pages a user reads, for the tests that hold them to what they say: the README and every docs/*.md page
// (CONTRIBUTING.md too where links and generated figures are concerned).
import { readdirSync, readFileSync } from "node:fs";
import * as path from "node:path";

export const ROOT = path.resolve(__dirname, "../..");

/** README.md, then every `docs/*.md` page, as paths from the repository root. */
export function userPages(): string[] {
  const docs = readdirSync(path.join(ROOT, "docs"))
    .filter((name) => name.endsWith(".md"))
    .sort()
    .map((name) => `docs/${name}`);
  return ["README.md", ...docs];
}

/** The text of a page given by its path from the repository root. */
export function pageText(page: string): string {
  return readFileSync(path.join(ROOT, page), "utf8");
}

/** One fenced code block: its language tag, its text, the prose since the previous block, and where it starts. */
export interface CodeBlock {
  page: string;
  line: number;
  lang: string;
  code: string;
  prose: string;
}

/** Every fenced code block of `page`, in order. */
export function codeBlocks(page: string): CodeBlock[] {
  const lines = pageText(page).split("\n");
  const blocks: CodeBlock[] = [];
  let prose: string[] = [];
  for (let i = 0; i < lines.length; i++) {
    const fence = /^```([\w-]*)/.exec(lines[i]);
    if (fence === null) {
      prose.push(lines[i]);
      continue;
    }
    const start = i;
    const body: string[] = [];
    for (i += 1; i < lines.length && !lines[i].startsWith("```"); i++) body.push(lines[i]);
    blocks.push({ page, line: start + 1, lang: fence[1], code: body.join("\n"), prose: prose.join("\n") });
    prose = [];
  }
  return blocks;
}

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces as hyphens. */
export function anchorOf(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N} _-]/gu, "")
    .replace(/ /g, "-");
}
