// The README and docs/ as a newcomer meets them: a README read in minutes with the two commands and the matcher-only
// start near its top, every page reachable from it, no dead relative link, and no measured figure typed by hand.
import { existsSync, readFileSync } from "node:fs";
import * as path from "node:path";
import { anchorOf, codeBlocks, pageText, ROOT, userPages } from "./pages";

// eslint-disable-next-line @typescript-eslint/no-require-imports -- the figures script is plain CommonJS
const figuresScript = require("../../scripts/readme-figures.js") as { REGION: RegExp; hashOf: (text: string) => string; pages: () => string[] };

const README = pageText("README.md");
const bytes = (text: string): number => Buffer.byteLength(text, "utf8");

test("the README is at most 12 KB, with the two commands and the matcher-only start in its first 5 KB", () => {
  expect(bytes(README)).toBeLessThanOrEqual(12 * 1024);
  const head = Buffer.from(README, "utf8")
    .subarray(0, 5 * 1024)
    .toString("utf8");
  for (const needle of [
    "npm ci && npm run parity",
    "npm test",
    "npm run test:all",
    "npm i -D jest-session-parity",
    'setupFilesAfterEnv: ["jest-session-parity/setup"]',
    "toBeBitwiseEqual",
  ]) {
    expect({ needle, inFirst5KB: head.includes(needle) }).toEqual({ needle, inFirst5KB: true });
  }
});

test("CI runs the full-suite command the README names", () => {
  const ci = readFileSync(path.join(ROOT, ".ci/run"), "utf8");
  expect(ci).toMatch(/^npm run test:all$/m);
  expect(README).toContain("npm run test:all");
  const manifest = JSON.parse(readFileSync(path.join(ROOT, "package.json"), "utf8")) as { scripts: Record<string, string> };
  expect(manifest.scripts["test:all"]).toMatch(/^npm test && /);
});

/** Every relative link of a page: [text](target) outside code blocks, with its target resolved from the page. */
function links(page: string): { target: string; file: string; anchor: string | null }[] {
  const text = pageText(page).replace(/^```[\s\S]*?^```/gm, "");
  const found: { target: string; file: string; anchor: string | null }[] = [];
  for (const match of text.matchAll(/\]\(([^)\s]+)\)/g)) {
    const target = match[1];
    if (/^[a-z]+:/i.test(target)) continue;
    const [file, anchor] = target.split("#");
    found.push({ target, file: file === "" ? page : path.posix.normalize(path.posix.join(path.posix.dirname(page), file)), anchor: anchor ?? null });
  }
  return found;
}

/** The anchors of a Markdown page's headings. */
function anchors(page: string): Set<string> {
  const text = pageText(page).replace(/^```[\s\S]*?^```/gm, "");
  return new Set([...text.matchAll(/^#{1,6} (.+)$/gm)].map((match) => anchorOf(match[1])));
}

const LINKED_PAGES = [...userPages(), "CONTRIBUTING.md"];

test("no relative link of the README, docs/ or CONTRIBUTING.md is dead (files and heading anchors)", () => {
  const dead: string[] = [];
  for (const page of LINKED_PAGES) {
    for (const link of links(page)) {
      if (!existsSync(path.join(ROOT, link.file))) dead.push(`${page}: ${link.target} (no such file)`);
      else if (link.anchor !== null && link.file.endsWith(".md") && !anchors(link.file).has(link.anchor))
        dead.push(`${page}: ${link.target} (no such heading)`);
    }
  }
  expect(dead).toEqual([]);
  expect(links("README.md").length).toBeGreaterThan(10);
});

test("every docs page is reachable from the README, and the index lists them all", () => {
  const seen = new Set<string>(["README.md"]);
  const queue = ["README.md"];
  while (queue.length > 0) {
    const page = queue.shift() as string;
    for (const link of links(page)) {
      if (link.file.endsWith(".md") && link.file.startsWith("docs/") && !seen.has(link.file) && existsSync(path.join(ROOT, link.file))) {
        seen.add(link.file);
        queue.push(link.file);
      }
    }
  }
  const docs = userPages().filter((page) => page.startsWith("docs/"));
  expect(docs.filter((page) => !seen.has(page))).toEqual([]);
  const indexed = new Set(links("docs/README.md").map((link) => link.file));
  expect(docs.filter((page) => page !== "docs/README.md" && !indexed.has(page))).toEqual([]);
});

describe("figures", () => {
  const regionsOf = (page: string): { name: string; hash: string; text: string }[] =>
    [...pageText(page).matchAll(new RegExp(figuresScript.REGION.source, "g"))].map((match) => ({ name: match[1], hash: match[2], text: match[3] }));

  test("every generated region holds what `npm run readme:figures` wrote (its hash matches)", () => {
    const regions = figuresScript.pages().flatMap((page) => regionsOf(page).map((region) => ({ page, ...region })));
    expect(regions.map((region) => region.name)).toEqual(expect.arrayContaining(["footprint", "test-counts", "capture-parity-pass", "bench-cli"]));
    expect(regions.filter((region) => figuresScript.hashOf(region.text) !== region.hash).map((region) => `${region.page}: ${region.name}`)).toEqual([]);
  });

  test("a region whose text was edited by hand fails the hash check", () => {
    const [region] = regionsOf("docs/getting-started.md");
    expect(figuresScript.hashOf(`${region.text} 510 kB`)).not.toBe(region.hash);
  });

  /** Figures that only a measurement gives: sizes, decimal timings and ratios, test totals, per-second rates. */
  const MEASURED = [
    /\b\d+(?:\.\d+)?\s?(?:kB|MB|GB)\b/,
    /\b\d+\.\d+\s?(?:ms|s)\b/,
    /\b\d+\.\d+\s?(?:×|x)(?=\s|$|[),.;])/,
    /\bTests:\s+\d+/,
    /\bTest Suites:\s+\d+/,
    /\b\d+(?:\.\d+)?\s?(?:schedules|requests)\/s\b/,
    /\bROOTCOUNT\b|\bTODO\b|\bTBD\b/,
  ];

  /** A figure right after one of these words is a goal or a cap someone set, not a measurement. */
  const TARGET = /\b(?:goal|goals|at most|within|cap|capped at|limit|budget)\b[^.;:]{0,40}$/i;

  /** True when `line` shows a measured-looking figure that is not a stated goal or cap. */
  function showsMeasurement(line: string): boolean {
    return MEASURED.some((pattern) => [...line.matchAll(new RegExp(pattern.source, "g"))].some((match) => !TARGET.test(line.slice(0, match.index))));
  }

  /** The lines of a page outside its generated regions that show a measured figure. */
  function handTyped(page: string): string[] {
    const outside = pageText(page).replace(new RegExp(figuresScript.REGION.source, "g"), "");
    return outside
      .split("\n")
      .filter(showsMeasurement)
      .map((line) => `${page}: ${line.trim().slice(0, 160)}`);
  }

  test("no page shows a measured figure outside a generated region", () => {
    expect(figuresScript.pages().flatMap(handTyped)).toEqual([]);
  });

  test("the check sees a figure typed into prose", () => {
    expect(showsMeasurement("the tarball is 510 kB")).toBe(true);
    expect(showsMeasurement("took 4.5 s in total, goal within 1.3 ×")).toBe(true);
    expect(showsMeasurement("3.1x slower")).toBe(true);
    expect(showsMeasurement("line 527 still says ROOTCOUNT")).toBe(true);
    expect(showsMeasurement("50 ms latency per call")).toBe(false);
    expect(showsMeasurement("at most 120 s and 1.5 GB peak RSS (the goal)")).toBe(false);
  });
});

test("the shell and TypeScript blocks the other doc tests run are found on every page", () => {
  const blocks = userPages().flatMap(codeBlocks);
  expect(blocks.filter((block) => ["sh", "bash", "shell"].includes(block.lang)).length).toBeGreaterThanOrEqual(8);
  expect(blocks.filter((block) => block.lang === "ts").length).toBeGreaterThanOrEqual(15);
});
