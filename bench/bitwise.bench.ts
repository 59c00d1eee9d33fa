// Bitwise comparator benchmark on one realistic pair of equal samples (1M tokens, 1M log-probs, 1M loss-mask
// entries, a (65536, 48, 8) int32 routed-experts tensor): time ratios against memcmp / a bare loop, extra heap,
// toMatchBitwiseSnapshot writing and checking the sample through Jest's own SnapshotState vs toBeBitwiseEqual, and the
// cost of Python number kinds (kinded vs plain scalars on the same sample), and the parity part's aligned runs: no cost on
// equal samples, a 10^6-token insertion explained in well under a second.
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { PerformanceObserver, performance } from "node:perf_hooks";
import { addSerializer, SnapshotState } from "jest-snapshot";
import { compareBitwise, compareBitwiseSummary } from "../src/matchers/bitwise";
import { formatVerdict, VerdictBuilder } from "../src/matchers/parity-verdict";
import { registerBitTreeTextSerializer, type BitTreePlugin } from "../src/snapshot/snapshot-serializers";
import { largeValuePath } from "../src/snapshot/large-value-files";
import {
  createToMatchBitwiseSnapshot,
  jestSnapshotMatch,
  type BitwiseSnapshotOptions,
  type SnapshotMatcherContext,
} from "../src/snapshot/to-match-bitwise-snapshot";
import { Sample } from "../src/wire/sample";
import { pyFloat, pyInt } from "../src/wire/py-json-values";
import { Tensor } from "../src/wire/tensor";

const TOKENS = 1_000_000;
const ROUTED_SHAPE = [65_536, 48, 8];
const TENSOR_ROUNDS = 15;
const ARRAY_ROUNDS = 41;
const SNAPSHOT_ROUNDS = 7;

function buildSample(): Sample {
  const tokens = new Array<number>(TOKENS);
  const logProbs = new Array<number>(TOKENS);
  const lossMask = new Array<number>(TOKENS);
  let state = 20260803;
  for (let i = 0; i < TOKENS; i++) {
    state = (Math.imul(state, 1103515245) + 12345) >>> 0;
    tokens[i] = state % 151_936;
    logProbs[i] = -(state / 0xffff_ffff) * 8 - 1e-9;
    lossMask[i] = i % 17 === 0 ? 0 : 1;
  }
  const routed = new Int32Array(ROUTED_SHAPE.reduce((a, b) => a * b, 1));
  for (let i = 0; i < routed.length; i++) routed[i] = Math.imul(i, 2654435761) >>> 24;
  return new Sample({
    tokens,
    response: "x",
    response_length: TOKENS,
    loss_mask: lossMask,
    rollout_log_probs: logProbs,
    rollout_routed_experts: new Tensor("I32", ROUTED_SHAPE, routed),
    status: "completed",
    metadata: { lifecycle: [{ t0: 1, t1: 2, turn: 1 }] },
  });
}

/** The baseline the issue names: a bare loop comparing two number arrays with Object.is. */
function bareObjectIsLoop(a: readonly number[], b: readonly number[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (!Object.is(a[i], b[i])) return false;
  return true;
}

function byteView(view: ArrayBufferView): Buffer {
  return Buffer.from(view.buffer, view.byteOffset, view.byteLength);
}

function timeMs(run: () => unknown): number {
  const start = process.hrtime.bigint();
  const result = run();
  const elapsed = Number(process.hrtime.bigint() - start) / 1e6;
  if (result === false || (Array.isArray(result) && result.length !== 0)) throw new Error("benchmark pair unexpectedly differs");
  return elapsed;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

/** Runs the two contenders alternately, so machine noise hits both alike; returns their median times. */
function sideBySide(rounds: number, a: () => unknown, b: () => unknown): [number, number] {
  for (let i = 0; i < 3; i++) {
    a();
    b();
  }
  const ta: number[] = [];
  const tb: number[] = [];
  for (let i = 0; i < rounds; i++) {
    if (i % 2 === 0) {
      ta.push(timeMs(a));
      tb.push(timeMs(b));
    } else {
      tb.push(timeMs(b));
      ta.push(timeMs(a));
    }
  }
  return [median(ta), median(tb)];
}

function verdict(ratio: number, goal: number): string {
  return ratio <= goal ? `goal <= ${goal}: met` : `goal <= ${goal}: MISSED`;
}

async function main(): Promise<void> {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (gc === undefined) throw new Error("run with --expose-gc (npm run bench does)");
  const left = buildSample();
  const right = buildSample();
  const leftTensor = left.rollout_routed_experts!;
  const rightTensor = right.rollout_routed_experts!;
  const tensorBytes = leftTensor.data.byteLength;

  // 1. Tensor comparison vs memcmp over the same bytes.
  const [tensorMs, memcmpMs] = sideBySide(
    TENSOR_ROUNDS,
    () => compareBitwise(leftTensor, rightTensor),
    () => Buffer.compare(byteView(leftTensor.data), byteView(rightTensor.data)) === 0,
  );

  // 2. Number-array comparison vs a bare Object.is loop, over the three per-token arrays.
  const arrays: Array<[string, number[], number[]]> = [
    ["tokens", left.tokens, right.tokens],
    ["rollout_log_probs", left.rollout_log_probs!, right.rollout_log_probs!],
    ["loss_mask", left.loss_mask!, right.loss_mask!],
  ];
  const [arraysMs, loopMs] = sideBySide(
    ARRAY_ROUNDS,
    () => arrays.every(([, a, b]) => compareBitwise(a, b).length === 0),
    () => arrays.every(([, a, b]) => bareObjectIsLoop(a, b)),
  );
  const perArray = arrays.map(([name, a, b]) => {
    const [mine, bare] = sideBySide(
      ARRAY_ROUNDS,
      () => compareBitwise(a, b),
      () => bareObjectIsLoop(a, b),
    );
    return `${name} ${(mine / bare).toFixed(2)}`;
  });

  // 3. Extra heap while comparing the whole samples, against the size of one side's compared data.
  const windows: Array<[number, number]> = [];
  let gcsDuringCompare = 0;
  const observer = new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      if (windows.some(([from, to]) => entry.startTime >= from && entry.startTime <= to)) gcsDuringCompare += 1;
    }
  });
  observer.observe({ entryTypes: ["gc"] });
  compareBitwise(left, right); // warm
  const heapDeltas: number[] = [];
  let sampleMs = 0;
  for (let round = 0; round < 5; round++) {
    gc();
    gc();
    await new Promise((resolve) => setImmediate(resolve));
    const windowStart = performance.now();
    const before = process.memoryUsage();
    const start = process.hrtime.bigint();
    const differences = compareBitwise(left, right);
    sampleMs = Number(process.hrtime.bigint() - start) / 1e6;
    const after = process.memoryUsage();
    windows.push([windowStart, performance.now()]);
    if (differences.length !== 0) throw new Error("benchmark pair unexpectedly differs");
    heapDeltas.push(after.heapUsed - before.heapUsed + (after.arrayBuffers - before.arrayBuffers) + (after.external - before.external));
  }
  await new Promise((resolve) => setTimeout(resolve, 50)); // let the last gc entries arrive
  observer.disconnect();
  const numberBytes = arrays.reduce((sum, [, a]) => sum + a.length * 8, 0);
  const comparedBytes = numberBytes + tensorBytes;
  const extraHeap = Math.max(0, Math.max(...heapDeltas));

  const tensorRatio = tensorMs / memcmpMs;
  const arrayRatio = arraysMs / loopMs;
  const heapRatio = extraHeap / comparedBytes;
  console.log(
    `data: ${TOKENS} tokens, ${TOKENS} log-probs, ${TOKENS} loss-mask entries, int32 tensor [${ROUTED_SHAPE.join(", ")}] (${(tensorBytes / 2 ** 20).toFixed(1)} MiB)`,
  );
  console.log(
    `tensor compare ÷ Buffer.compare:        ${tensorRatio.toFixed(3)}  (${tensorMs.toFixed(2)} ms vs ${memcmpMs.toFixed(2)} ms; ${verdict(tensorRatio, 1.5)})`,
  );
  console.log(
    `number-array compare ÷ Object.is loop:  ${arrayRatio.toFixed(3)}  (${arraysMs.toFixed(2)} ms vs ${loopMs.toFixed(2)} ms for 3 x ${TOKENS}; per array: ${perArray.join(", ")}; ${verdict(arrayRatio, 3)})`,
  );
  console.log(
    `extra heap ÷ compared bytes:            ${heapRatio.toExponential(2)}  (max ${extraHeap} B over 5 whole-sample compares of ${(comparedBytes / 2 ** 20).toFixed(1)} MiB per side; GCs during them: ${gcsDuringCompare}; ${verdict(heapRatio, 0.05)})`,
  );
  console.log(`whole-sample compare: ${sampleMs.toFixed(2)} ms`);

  // 4. Python number kinds: the same pair with its scalars kinded (reward 1.0, a float and a big int in metadata, as
  // a decoded reply holds them) vs plain; the per-token arrays are shared, so this is the kind check's own cost.
  const withScalars = (sample: Sample, kinded: boolean): Sample =>
    Object.assign(new Sample(), sample, {
      reward: kinded ? pyFloat(1) : 1,
      metadata: { ...sample.metadata, score: kinded ? pyFloat(2) : 2, id: kinded ? pyInt("9007199254740993") : 7 },
    });
  const [kindedMs, plainMs] = sideBySide(
    TENSOR_ROUNDS,
    () => compareBitwise(withScalars(left, true), withScalars(right, true)),
    () => compareBitwise(withScalars(left, false), withScalars(right, false)),
  );
  const kindRatio = kindedMs / plainMs;
  console.log(
    `kinded ÷ plain scalars, whole sample:   ${kindRatio.toFixed(3)}  (${kindedMs.toFixed(2)} ms vs ${plainMs.toFixed(2)} ms; ${verdict(kindRatio, 1.2)})`,
  );
  snapshotFigures(left, right);
  alignmentFigures(left, right);
}

/**
 * The parity check's bitwise part on equal samples (alignment runs only on a failure) against the comparator alone
 * (what the part ran before the alignment existed), side by side; then a 10^6-token failure (a 4-token think block
 * inserted at 242 into tokens, loss mask and log-probs) explained as aligned runs, against its positional listing.
 */
function alignmentFigures(left: Sample, right: Sample): void {
  const part = (a: Sample, b: Sample) => () => {
    const builder = new VerdictBuilder();
    builder.compare("training sample", "v1 (left) vs v2 (right)", a, b, { rootPath: "sample" });
    return builder.verdict();
  };
  const positional = (a: Sample, b: Sample) => () => compareBitwiseSummary(a, b, { rootPath: "sample", maxDifferences: 10 });
  const [partMs, comparatorMs] = sideBySide(
    ARRAY_ROUNDS,
    () => part(left, right)().failures,
    () => positional(left, right)().differences,
  );
  const ratio = partMs / comparatorMs;
  console.log(
    `parity part ÷ comparator, equal samples: ${ratio.toFixed(3)}  (${partMs.toFixed(2)} ms vs ${comparatorMs.toFixed(2)} ms; ${verdict(ratio, 1.05)})`,
  );
  const inserted = withThinkBlock(left);
  const explain = (): number => {
    const verdict = part(inserted, right)();
    return formatVerdict(verdict, { sides: { leftName: "v1", rightName: "v2" } }).length;
  };
  const list = (): number => positional(inserted, right)().total;
  const explainTimes: number[] = [];
  const listTimes: number[] = [];
  for (let round = 0; round < 5; round++) {
    let start = process.hrtime.bigint();
    explain();
    explainTimes.push(Number(process.hrtime.bigint() - start) / 1e6);
    start = process.hrtime.bigint();
    list();
    listTimes.push(Number(process.hrtime.bigint() - start) / 1e6);
  }
  const explained = median(explainTimes);
  const listed = median(listTimes);
  const text = formatVerdict(part(inserted, right)(), { sides: { leftName: "v1", rightName: "v2" } });
  console.log(
    `10^6-token insertion explained as runs:  ${explained.toFixed(1)} ms (positional listing alone ${listed.toFixed(1)} ms, ${(explained / listed).toFixed(2)} x; goal < 1000 ms: ${explained < 1000 ? "met" : "MISSED"})`,
  );
  console.log(text.split("\n")[1].trim());
}

/** `sample` with a 4-token empty think block inserted at 242 into its tokens and per-token arrays. */
function withThinkBlock(sample: Sample): Sample {
  const insert = <T>(values: readonly T[], added: readonly T[]): T[] => [...values.slice(0, 242), ...added, ...values.slice(242)];
  return new Sample({
    tokens: insert(sample.tokens, [151667, 271, 151668, 271]),
    response: sample.response,
    response_length: sample.response_length + 4,
    loss_mask: insert(sample.loss_mask ?? [], [0, 0, 0, 0]),
    rollout_log_probs: insert(sample.rollout_log_probs ?? [], [-0, -0, -0, -0]),
    rollout_routed_experts: sample.rollout_routed_experts,
    status: sample.status,
    metadata: sample.metadata,
  });
}

/** One toMatchBitwiseSnapshot call on a fresh Jest SnapshotState for `file` (`all`: write; `none`: check), saved. */
function snapshotOnce(file: string, mode: "all" | "none", value: unknown, options?: BitwiseSnapshotOptions): boolean {
  const state = new SnapshotState(file, {
    updateSnapshot: mode,
    rootDir: path.dirname(file),
    snapshotFormat: { escapeString: false, printBasicPrototype: false },
    prettierPath: null,
  });
  const context = {
    snapshotState: state,
    currentTestName: "bench sample",
    isNot: false,
    utils: { matcherHint: () => "" },
  } as unknown as SnapshotMatcherContext;
  const result = createToMatchBitwiseSnapshot(jestSnapshotMatch).call(context, value, options);
  state.save();
  return result.pass;
}

/** toMatchBitwiseSnapshot (write, then check) against toBeBitwiseEqual's comparison of the same pair. */
function snapshotFigures(left: Sample, right: Sample): void {
  registerBitTreeTextSerializer({ addSnapshotSerializer: (plugin: BitTreePlugin) => addSerializer(plugin) });
  const directory = fs.mkdtempSync(path.join(os.tmpdir(), "bitwise-snapshot-bench-"));
  const file = path.join(directory, "__snapshots__", "bench.test.ts.snap");
  try {
    const write = (): boolean => {
      fs.rmSync(path.dirname(file), { recursive: true, force: true });
      return snapshotOnce(file, "all", left);
    };
    const check = (): boolean => snapshotOnce(file, "none", right);
    const compare = (): boolean => compareBitwise(left, right).length === 0;
    const [writeMs, compareForWrite] = sideBySide(SNAPSHOT_ROUNDS, write, compare);
    write();
    const [checkMs, compareForCheck] = sideBySide(SNAPSHOT_ROUNDS, check, compare);
    const snapBytes = fs.statSync(file).size;
    const storedStart = process.hrtime.bigint();
    fs.rmSync(path.dirname(file), { recursive: true, force: true });
    if (!snapshotOnce(file, "all", left, { largeArrays: "safetensors" })) throw new Error("stored write failed");
    const storedWriteMs = Number(process.hrtime.bigint() - storedStart) / 1e6;
    const storedFiles = fs.readdirSync(path.dirname(file)).filter((name) => name.endsWith(".safetensors"));
    const storedBytes = storedFiles.reduce((sum, name) => sum + fs.statSync(path.join(path.dirname(file), name)).size, 0);
    const storedCheckStart = process.hrtime.bigint();
    if (!snapshotOnce(file, "none", right, { largeArrays: "safetensors" })) throw new Error("stored check failed");
    const storedCheckMs = Number(process.hrtime.bigint() - storedCheckStart) / 1e6;
    const compareMs = Math.min(compareForWrite, compareForCheck);
    console.log(
      `snapshot write ÷ toBeBitwiseEqual:        ${(writeMs / compareForWrite).toFixed(2)}  (${writeMs.toFixed(1)} ms vs ${compareForWrite.toFixed(1)} ms; ${verdict(writeMs / compareForWrite, 3)})`,
    );
    console.log(
      `snapshot check ÷ toBeBitwiseEqual:        ${(checkMs / compareForCheck).toFixed(2)}  (${checkMs.toFixed(1)} ms vs ${compareForCheck.toFixed(1)} ms; ${verdict(checkMs / compareForCheck, 3)})`,
    );
    console.log(`snapshot file: ${snapBytes} B (${fs.readFileSync(file, "utf8").split("\n").length} lines; the four large values are one SHA-256 line each)`);
    console.log(
      `with largeArrays "safetensors": write ${storedWriteMs.toFixed(1)} ms (${(storedWriteMs / compareMs).toFixed(2)} x), check ${storedCheckMs.toFixed(1)} ms (${(storedCheckMs / compareMs).toFixed(2)} x), ${storedFiles.length} files beside it, ${(storedBytes / 2 ** 20).toFixed(1)} MiB (${path.basename(largeValuePath(file, "<sha256>"))})`,
    );
  } finally {
    fs.rmSync(directory, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
