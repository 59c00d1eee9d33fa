// Every TypeScript example of the README and docs/*.md type-checks against the package's own sources, as a user's
// project would see them: `jest-session-parity` and its subpaths resolve to src/ and setup/, strict mode on.
// A fragment (no imports of its own) may use the names the pages introduce earlier: `v1`, `v2`, `runs` and the
// scenario constants are declared for it in PRELUDE; anything else it uses must come from its own imports.
import * as path from "node:path";
import ts from "typescript";
import { codeBlocks, ROOT, userPages, type CodeBlock } from "./pages";

jest.setTimeout(300_000);

const PRELUDE = `
type Root = typeof import("jest-session-parity");
declare const v1: import("jest-session-parity").SessionParityRun[];
declare const v2: import("jest-session-parity").SessionParityRun[];
declare const runs: import("jest-session-parity").SessionParityRun[];
declare const reply: unknown;
declare const payload: Uint8Array;
declare const inputSample: import("jest-session-parity").Sample;
declare const myRewrittenV2Policy: import("jest-session-parity/server").SessionPolicy;
declare const WEATHER_RETRY_TOPOLOGY: Root["WEATHER_RETRY_TOPOLOGY"];
declare const WEATHER_AGENT_METADATA: Root["WEATHER_AGENT_METADATA"];
declare const WEATHER_TOOL_ROUND_TRIPS: Root["WEATHER_TOOL_ROUND_TRIPS"];
declare const trainingMetadataProjection: Root["trainingMetadataProjection"];
declare const buildWeatherInputSamples: Root["buildWeatherInputSamples"];
declare const runAgenticRetryTrajectories: Root["runAgenticRetryTrajectories"];
`;

const ENTRY_PATHS: Record<string, string[]> = {
  "jest-session-parity": ["src/index.ts"],
  "jest-session-parity/matchers": ["src/entries/matchers.ts"],
  "jest-session-parity/server": ["src/entries/server.ts"],
  "jest-session-parity/mock": ["src/entries/mock.ts"],
  "jest-session-parity/tokenizer": ["src/entries/tokenizer.ts"],
  "jest-session-parity/wire": ["src/entries/wire.ts"],
  "jest-session-parity/setup": ["setup/setup.ts"],
  "jest-session-parity/jest-preset": ["jest-preset.js"],
};

/** One example as a module: its imports on top, the rest inside an async function unless it exports something. */
function asModule(block: CodeBlock): string {
  const lines = block.code.split("\n");
  const imports: string[] = [];
  const body: string[] = [];
  let inImport = false;
  for (const line of lines) {
    if (inImport || /^import\b/.test(line)) {
      imports.push(line);
      inImport = !/from\s+["'][^"']+["'];?\s*$|^import\s+["'][^"']+["'];?\s*$/.test(line);
    } else {
      body.push(line);
    }
  }
  const exports = body.some((line) => /^export\b/.test(line));
  return exports
    ? `${block.code}\nexport {};\n`
    : `${imports.join("\n")}\nexport {};\nasync function example(): Promise<void> {\n${body.join("\n")}\n}\nvoid example;\n`;
}

const TS_BLOCKS = userPages()
  .flatMap(codeBlocks)
  .filter((block) => block.lang === "ts");
const usesVitest = (block: CodeBlock): boolean => /from "vitest(\/config)?"/.test(block.code);

/** Type-checks `blocks` in one program; returns one line per diagnostic, naming the page and line of the example. */
function check(blocks: CodeBlock[], options: ts.CompilerOptions, extraRoots: string[]): string[] {
  const dir = path.join(ROOT, "__docs_examples__");
  const files = new Map<string, { text: string; block: CodeBlock | null }>();
  files.set(path.join(dir, "prelude.d.ts"), { text: PRELUDE, block: null });
  blocks.forEach((block, i) => {
    // An example whose first line names its file (`// weather-slice.ts: ...`) is that file, so its neighbours import it.
    const named = /^\/\/ ([\w.-]+)\.ts\b/.exec(block.code);
    const ext = usesVitest(block) && /defineConfig/.test(block.code) ? "mts" : "ts";
    files.set(path.join(dir, named === null ? `example-${i}.${ext}` : `${named[1]}.ts`), { text: asModule(block), block });
  });
  const host = ts.createCompilerHost(options);
  const disk = ts.createCompilerHost(options);
  host.directoryExists = (directory) => path.resolve(directory) === dir || (disk.directoryExists?.(directory) ?? true);
  host.fileExists = (file) => files.has(path.resolve(file)) || disk.fileExists(file);
  host.readFile = (file) => files.get(path.resolve(file))?.text ?? disk.readFile(file);
  host.getSourceFile = (file, language, onError, create) => {
    const virtual = files.get(path.resolve(file));
    return virtual === undefined ? disk.getSourceFile(file, language, onError, create) : ts.createSourceFile(file, virtual.text, language, true);
  };
  const program = ts.createProgram([...files.keys(), ...extraRoots.map((file) => path.join(ROOT, file))], options, host);
  return ts
    .getPreEmitDiagnostics(program)
    .filter((diagnostic) => diagnostic.file !== undefined && files.has(path.resolve(diagnostic.file.fileName)))
    .map((diagnostic) => {
      const { block } = files.get(path.resolve(diagnostic.file!.fileName))!;
      const where = block === null ? "prelude" : `${block.page}:${block.line}`;
      return `${where}: TS${diagnostic.code} ${ts.flattenDiagnosticMessageText(diagnostic.messageText, " ")}`;
    });
}

const COMMON: ts.CompilerOptions = {
  strict: true,
  noEmit: true,
  skipLibCheck: true,
  esModuleInterop: true,
  resolveJsonModule: true,
  allowJs: true,
  target: ts.ScriptTarget.ES2022,
  lib: ["lib.es2023.d.ts"],
  baseUrl: ROOT,
  paths: ENTRY_PATHS,
};

test("the docs show TypeScript examples for Jest and for Vitest", () => {
  expect(TS_BLOCKS.filter((block) => !usesVitest(block)).length).toBeGreaterThanOrEqual(15);
  expect(TS_BLOCKS.filter(usesVitest).length).toBeGreaterThanOrEqual(2);
});

test("every Jest TypeScript example of the README and docs/ type-checks", () => {
  const problems = check(
    TS_BLOCKS.filter((block) => !usesVitest(block)),
    { ...COMMON, module: ts.ModuleKind.CommonJS, moduleResolution: ts.ModuleResolutionKind.Node10, types: ["node", "jest"] },
    ["setup/setup.ts"],
  );
  expect(problems).toEqual([]);
});

test("every Vitest TypeScript example type-checks with the Vitest typings entry", () => {
  const problems = check(
    TS_BLOCKS.filter(usesVitest),
    {
      ...COMMON,
      module: ts.ModuleKind.ESNext,
      moduleResolution: ts.ModuleResolutionKind.Bundler,
      types: ["node"],
      paths: { ...ENTRY_PATHS, "jest-session-parity/vitest": ["setup/vitest.mts"] },
    },
    ["setup/vitest.mts"],
  );
  expect(problems).toEqual([]);
});

test("a wrong example fails the check", () => {
  const broken: CodeBlock = { page: "broken.md", line: 1, lang: "ts", prose: "", code: 'expect([0]).toBeBitwiseEqual([0], { maxDifferences: "ten" });' };
  const problems = check([broken], { ...COMMON, module: ts.ModuleKind.CommonJS, moduleResolution: ts.ModuleResolutionKind.Node10, types: ["node", "jest"] }, [
    "setup/setup.ts",
  ]);
  expect(problems).toEqual([expect.stringMatching(/^broken\.md:1: TS2322 /)]);
});
