// toMatchBitwiseSnapshot: writes the received value's bit tree and lets the runner's own snapshot state store and
// compare it (so -u, --ci, obsolete reporting and summaries are the runner's); on a mismatch it lists the differing leaves.
import type { SyncExpectationResult } from "expect";
import { ArrayDigest } from "./array-digest";
import { parseBitTree, SnapshotTextError } from "./bit-tree-parse";
import { serializeBitTree, type LargeArrayStorage } from "./bit-tree-text";
import { readLargeValue, snapshotHeaderLine, writeLargeValues } from "./large-value-files";
import { bitwiseRootName } from "./root-name";
import { BitTreeSnapshotText, isBitTreeTextSerializerRegistered } from "./snapshot-serializers";
import { compareBitwiseSummary } from "../matchers/bitwise";
import { BitwiseUsageError, type BitwiseDifference, type MetadataProjection } from "../matchers/bitwise-types";
import { formatDifferenceCount, formatDifferences } from "../matchers/format-differences";
import { trainingMetadataProjection } from "../matchers/training-metadata-projection";
import type { Tensor } from "../wire/tensor";

/** Options of `toMatchBitwiseSnapshot`. */
export interface BitwiseSnapshotOptions {
  /** Applied to every Sample's `metadata` before it is written (default `trainingMetadataProjection`; `null`: none). */
  metadataProjection?: MetadataProjection | null;
  /** `digest` (default): large values are one SHA-256 line; `safetensors`: also stored in full beside the snapshot file. */
  largeArrays?: LargeArrayStorage;
  /** Differing leaves printed on a mismatch (default 10). */
  maxDifferences?: number;
}

/** What the runner's snapshot state answered for one snapshot. */
interface RunnerSnapshotResult {
  /** The runner's verdict (true also when it wrote a new or updated snapshot). */
  pass: boolean;
  /** The stored text it compared with; undefined when it had none (and did not write one: `--ci`). */
  expected: string | undefined;
  /** The received text as the runner serialized it, when it says (used to check the serializer is in place). */
  actual?: string;
  /** The snapshot's key (`test name 1`), when known. */
  key: string | undefined;
}

/** The parts of a runner's snapshot state the matcher reads (Jest's and Vitest's both have them). */
interface RunnerSnapshotState {
  /** Path of the test file's snapshot file. */
  readonly snapshotPath?: string;
  /** Snapshots written as new so far (a number in Jest, a counter with `valueOf` in Vitest). */
  readonly added: unknown;
  /** Snapshots rewritten so far. */
  readonly updated: unknown;
}

/** The matcher context fields the snapshot matcher uses (Jest's and Vitest's). */
export interface SnapshotMatcherContext {
  isNot?: boolean;
  promise?: string;
  snapshotState?: RunnerSnapshotState | null;
  utils: { matcherHint(name: string, received?: string, expected?: string, options?: { isNot?: boolean; promise?: string }): string };
}

/** Asks the runner's snapshot state to match (and, under its own rules, write) the text. */
export type RunnerSnapshotMatch = (context: SnapshotMatcherContext, received: BitTreeSnapshotText, hint: string | undefined) => RunnerSnapshotResult;

const OPTION_KEYS = ["metadataProjection", "largeArrays", "maxDifferences"];
const DEFAULT_REPORTED = 10;

/** Builds `toMatchBitwiseSnapshot` on a runner's snapshot state (`jestSnapshotMatch` for Jest; the Vitest entry passes its own). */
export function createToMatchBitwiseSnapshot(runnerMatch: RunnerSnapshotMatch) {
  return function toMatchBitwiseSnapshot(
    this: SnapshotMatcherContext,
    received: unknown,
    hintOrOptions?: string | BitwiseSnapshotOptions,
    maybeOptions?: BitwiseSnapshotOptions,
  ): SyncExpectationResult {
    const hint = typeof hintOrOptions === "string" ? hintOrOptions : undefined;
    const options = checkOptions(typeof hintOrOptions === "object" && hintOrOptions !== null ? hintOrOptions : maybeOptions);
    const matcherHint = this.utils.matcherHint("toMatchBitwiseSnapshot", undefined, hint === undefined ? "" : "hint", {
      isNot: this.isNot,
      promise: this.promise,
    });
    if (this.isNot) throw new Error(`${matcherHint}\n\nSnapshot matchers cannot be used with not`);
    const state = this.snapshotState;
    if (state === undefined || state === null)
      throw new Error(`${matcherHint}\n\nSnapshot state must be initialized (toMatchBitwiseSnapshot runs inside a Jest or Vitest test)`);
    if (!isBitTreeTextSerializerRegistered()) {
      throw new BitwiseUsageError(
        "",
        "toMatchBitwiseSnapshot needs its snapshot serializer: register the matchers with the package's setup entry (jest-session-parity/setup or jest-session-parity/vitest) or registerSessionParityMatchers(expect)",
      );
    }
    const projection = options.metadataProjection === undefined ? trainingMetadataProjection : (options.metadataProjection ?? undefined);
    const rootPath = bitwiseRootName(received);
    // Throws a BitwiseUsageError naming the path before the runner's state is touched: nothing is recorded.
    const written = serializeBitTree(received, { metadataProjection: projection, largeArrays: options.largeArrays, rootPath });

    const writesBefore = writeCount(state);
    const result = runnerMatch(this, new BitTreeSnapshotText(written.text), hint);
    const snapshotPath = state.snapshotPath;
    // Stored files follow the runner's write rules: written with a new or rewritten snapshot, and restored beside a
    // matching one when the runner may write (a deleted file comes back without -u, never under --ci).
    const runnerWrote = writeCount(state) > writesBefore;
    if ((runnerWrote || (result.pass && updateMode(state) !== "none")) && snapshotPath !== undefined && options.largeArrays === "safetensors") {
      writeLargeValues(snapshotPath, storedOnly(written.text, written.largeValues));
    }
    if (result.actual !== undefined && result.actual !== "" && result.actual.trim() !== written.text) {
      throw new BitwiseUsageError("", "the runner did not print the bit-tree text as is: another snapshot serializer took precedence over the package's");
    }
    if (result.pass) return { pass: true, message: () => `${matcherHint}\n\nThe snapshot matched, so .not would fail.` };

    const name = result.key === undefined ? "" : `Snapshot name: \`${result.key}\`\n\n`;
    if (result.expected === undefined) {
      return {
        pass: false,
        message: () =>
          `${matcherHint}\n\n${name}New snapshot was not written. The update flag must be explicitly passed to write a new snapshot.\n\n` +
          `This is likely because this test is run in a continuous integration (CI) environment in which snapshots are not written by default.`,
      };
    }
    const expected = result.expected;
    return {
      pass: false,
      message: () =>
        `${matcherHint}\n\n${name}${describeMismatch(written.text, expected, written.largeValues, rootPath, options.maxDifferences ?? DEFAULT_REPORTED, snapshotPath, result.key)}`,
    };
  };
}

/** The Jest adapter: the same call into `this.snapshotState.match` that Jest's own toMatchSnapshot makes. */
export const jestSnapshotMatch: RunnerSnapshotMatch = (context, received, hint) => {
  const jest = context as SnapshotMatcherContext & {
    currentTestName?: string;
    currentConcurrentTestName?: () => string | undefined;
    currentTestIdentity?: () => object | undefined;
    testFailing?: boolean;
    error?: Error;
    dontThrow?: () => void;
    snapshotState: { match(options: Record<string, unknown>): { pass: boolean; expected?: string; actual?: string; key?: string; count: number } };
  };
  const testFailing = jest.testFailing ?? false;
  if (!testFailing && jest.dontThrow !== undefined) jest.dontThrow();
  const testName = jest.currentConcurrentTestName?.() ?? jest.currentTestName;
  const fullTestName = testName && hint ? `${testName}: ${hint}` : testName || "";
  const result = jest.snapshotState.match({
    error: jest.error,
    isInline: false,
    received,
    testFailing,
    testIdentity: jest.currentTestIdentity?.(),
    testName: fullTestName,
  });
  return { pass: result.pass, expected: result.pass ? "" : result.expected, actual: result.actual, key: result.key ?? `${fullTestName} ${result.count}` };
};

/** The mismatch report: differing leaves (stored tensors compared element by element), or where the text is unreadable. */
function describeMismatch(
  actualText: string,
  expectedText: string,
  largeValues: ReadonlyMap<string, Tensor>,
  rootPath: string,
  limit: number,
  snapshotPath: string | undefined,
  key: string | undefined,
): string {
  let stored: unknown;
  try {
    stored = parseBitTree(expectedText);
  } catch (error) {
    if (!(error instanceof SnapshotTextError)) throw error;
    const header = snapshotPath !== undefined && key !== undefined ? snapshotHeaderLine(snapshotPath, key) : null;
    const where =
      snapshotPath === undefined
        ? `line ${error.line} of the snapshot`
        : header === null
          ? `${snapshotPath} (line ${error.line} of the snapshot)`
          : `${snapshotPath}:${header + error.line}`;
    return `The stored snapshot cannot be read as a bit tree: ${where}: ${error.problem}\nFix the file by hand or rewrite the snapshot with the update flag (-u).`;
  }
  const received = parseBitTree(actualText);
  const summary = compareBitwiseSummary(received, stored, { rootPath, maxDifferences: Infinity });
  if (summary.total === 0) {
    const actualLines = actualText.split("\n");
    const expectedLines = expectedText.split("\n");
    let line = 0;
    while (line < actualLines.length && actualLines[line] === expectedLines[line]) line++;
    return `The stored snapshot holds the same bit tree but is written differently from line ${line + 1} of the snapshot: ${JSON.stringify(expectedLines[line] ?? "")} vs the written form ${JSON.stringify(actualLines[line] ?? "")}.`;
  }
  const notes: string[] = [];
  const differences: BitwiseDifference[] = [];
  let total = 0;
  for (const difference of summary.differences) {
    const expanded = expandStoredDigest(difference, received, stored, largeValues, snapshotPath, notes);
    if (expanded === null) {
      differences.push(difference);
      total += 1;
    } else {
      differences.push(...expanded.differences);
      total += expanded.total;
    }
  }
  const shown = Math.min(limit, differences.length);
  return (
    `Received (left) and the stored snapshot (right) are not bitwise equal:\n` +
    `${formatDifferences(differences, { limit, indent: "  " })}\n` +
    formatDifferenceCount(total, shown) +
    (notes.length > 0 ? `\n${notes.join("\n")}` : "")
  );
}

/** A differing digest whose stored bytes are at hand becomes the differing elements themselves. */
function expandStoredDigest(
  difference: BitwiseDifference,
  received: unknown,
  stored: unknown,
  largeValues: ReadonlyMap<string, Tensor>,
  snapshotPath: string | undefined,
  notes: string[],
): { differences: BitwiseDifference[]; total: number } | null {
  if (!difference.path.endsWith(".sha256") || typeof difference.left !== "string" || typeof difference.right !== "string") return null;
  const storedDigest = findDigest(stored, difference.right);
  if (storedDigest === null || !storedDigest.stored || snapshotPath === undefined) return null;
  const full = largeValues.get(difference.left);
  if (full === undefined || findDigest(received, difference.left) === null) return null;
  const read = readLargeValue(snapshotPath, difference.right);
  if ("problem" in read) {
    notes.push(`(the stored bytes of ${difference.path.slice(0, -7)} cannot be compared: ${read.problem})`);
    return null;
  }
  const leafPath = difference.path.slice(0, -".sha256".length);
  const summary = compareBitwiseSummary(full, read.tensor, { rootPath: leafPath, maxDifferences: DEFAULT_REPORTED * 10 });
  return summary.total === 0 ? null : { differences: summary.differences, total: summary.total };
}

function findDigest(tree: unknown, sha256: string): ArrayDigest | null {
  const seen = new Set<object>();
  const visit = (value: unknown): ArrayDigest | null => {
    if (value instanceof ArrayDigest) return value.sha256 === sha256 ? value : null;
    if (typeof value !== "object" || value === null || seen.has(value) || ArrayBuffer.isView(value)) return null;
    seen.add(value);
    const children = value instanceof Map ? [...value.values()] : Object.values(value);
    for (const child of children) {
      const found = visit(child);
      if (found !== null) return found;
    }
    return null;
  };
  return visit(tree);
}

function storedOnly(text: string, values: ReadonlyMap<string, Tensor>): Map<string, Tensor> {
  const kept = new Map<string, Tensor>();
  for (const [sha256, tensor] of values) if (text.includes(` sha256 ${sha256} stored`)) kept.set(sha256, tensor);
  return kept;
}

/** Jest's `_updateSnapshot` or Vitest's `snapshotUpdateState`: `all` (-u), `new` (default) or `none` (--ci). */
function updateMode(state: RunnerSnapshotState): string | undefined {
  const s = state as { _updateSnapshot?: string; snapshotUpdateState?: string };
  return s._updateSnapshot ?? s.snapshotUpdateState;
}

function writeCount(state: RunnerSnapshotState): number {
  return Number(state.added) + Number(state.updated);
}

function checkOptions(options: unknown): BitwiseSnapshotOptions {
  if (options === undefined) return {};
  if (options === null || typeof options !== "object" || Array.isArray(options))
    throw new BitwiseUsageError(
      "",
      `toMatchBitwiseSnapshot options must be an object, got ${options === null ? "null" : Array.isArray(options) ? "an array" : typeof options}`,
    );
  const unknown = Object.keys(options).filter((key) => !OPTION_KEYS.includes(key));
  if (unknown.length > 0)
    throw new BitwiseUsageError(
      "",
      `unknown toMatchBitwiseSnapshot option${unknown.length > 1 ? "s" : ""} ${unknown.map((key) => JSON.stringify(key)).join(", ")}; known options: ${OPTION_KEYS.join(", ")}`,
    );
  const { metadataProjection, largeArrays, maxDifferences } = options as BitwiseSnapshotOptions;
  if (metadataProjection !== undefined && metadataProjection !== null && typeof metadataProjection !== "function")
    throw new BitwiseUsageError("", `option metadataProjection must be a function or null, got ${typeof metadataProjection}`);
  if (largeArrays !== undefined && largeArrays !== "digest" && largeArrays !== "safetensors")
    throw new BitwiseUsageError("", `option largeArrays must be "digest" or "safetensors", got ${JSON.stringify(largeArrays)}`);
  if (maxDifferences !== undefined && !(maxDifferences === Infinity || (Number.isInteger(maxDifferences) && maxDifferences >= 0)))
    throw new BitwiseUsageError("", `option maxDifferences must be a non-negative integer or Infinity, got ${String(maxDifferences)}`);
  return options;
}

/** `toMatchBitwiseSnapshot` on Jest's snapshot state (registered by `registerSessionParityMatchers`). */
export const toMatchBitwiseSnapshot = createToMatchBitwiseSnapshot(jestSnapshotMatch);
