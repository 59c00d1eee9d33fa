// Samples-wire benchmark: encode/decode of a 1M-token reply with a (65536, 48, 8) int32 routed-experts tensor,
// timed against a plain Buffer.copy of the same byte count, plus peak extra memory ÷ payload during decode.
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { WIRE_FIELDS_V1, decodeSamplesReply, encodeSamples, encodeSamplesChunks } from "../src/wire";
import { Sample } from "../src/wire/sample";
import { Tensor } from "../src/wire/tensor";

const TOKENS = 1_000_000;
const ROUTED_SHAPE = [65_536, 48, 8];
const ROUNDS = 7;
const OPTIONS = { fields: WIRE_FIELDS_V1 };
const CHILD_ENV = "WIRE_BENCH_DECODE_FILE";

function buildSample(): Sample {
  const tokens = new Array<number>(TOKENS);
  const logProbs = new Array<number>(TOKENS);
  const lossMask = new Array<number>(TOKENS);
  let state = 12345;
  for (let i = 0; i < TOKENS; i++) {
    state = (state * 1103515245 + 12345) >>> 0;
    tokens[i] = state % 151_936;
    logProbs[i] = -(state / 0xffff_ffff) * 8;
    lossMask[i] = i % 17 === 0 ? 0 : 1;
  }
  const routed = new Int32Array(ROUTED_SHAPE.reduce((a, b) => a * b, 1));
  for (let i = 0; i < routed.length; i++) routed[i] = (i * 2654435761) % 256;
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

function time(run: () => void): number {
  const start = process.hrtime.bigint();
  run();
  return Number(process.hrtime.bigint() - start) / 1e6;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

function collect(): void {
  (globalThis as { gc?: () => void }).gc?.();
}

/** Child mode: read the payload, then measure how far decoding raises memory above that state. */
function decodeMemoryChild(file: string): void {
  const payload = new Uint8Array(fs.readFileSync(file));
  collect();
  collect();
  const before = process.memoryUsage();
  const maxRssBefore = process.resourceUsage().maxRSS * 1024;
  const reply = decodeSamplesReply(payload, new Sample(), OPTIONS);
  const after = process.memoryUsage();
  const maxRssAfter = process.resourceUsage().maxRSS * 1024;
  const heapAndBuffers = (m: NodeJS.MemoryUsage): number => m.heapUsed + m.arrayBuffers;
  process.stdout.write(
    JSON.stringify({
      payload: payload.length,
      // Upper bound on the decode's peak: the process's peak RSS after decoding, minus RSS before it.
      peakRssExtra: Math.max(maxRssAfter, maxRssBefore) - before.rss,
      // JS heap + array buffers right after decoding, before any forced GC (retained result plus uncollected garbage).
      heapExtraNoGc: heapAndBuffers(after) - heapAndBuffers(before),
      samples: reply.samples.length,
    }),
  );
}

function main(): void {
  if (typeof (globalThis as { gc?: unknown }).gc !== "function") console.warn("run with --expose-gc (npm run bench) for stable memory figures");
  const sample = buildSample();
  const payload = encodeSamples([sample], {}, OPTIONS);
  const bytes = payload.length;
  console.log(`payload: ${(bytes / 2 ** 20).toFixed(1)} MiB (${TOKENS} tokens, routed experts [${ROUTED_SHAPE.join(", ")}] int32)`);

  const source = Buffer.from(payload.buffer, payload.byteOffset, payload.length);
  const target = Buffer.alloc(bytes, 1);
  const runs: Record<"copy" | "freshCopy" | "encode" | "encodeChunks" | "decode", number[]> = {
    copy: [],
    freshCopy: [],
    encode: [],
    encodeChunks: [],
    decode: [],
  };
  let sink = 0;
  for (let round = 0; round < ROUNDS; round++) {
    collect();
    runs.copy.push(time(() => source.copy(target)));
    collect();
    runs.freshCopy.push(time(() => (sink += source.copy(Buffer.allocUnsafeSlow(bytes)))));
    collect();
    runs.encode.push(time(() => (sink += encodeSamples([sample], {}, OPTIONS).length)));
    collect();
    runs.encodeChunks.push(time(() => (sink += encodeSamplesChunks([sample], {}, OPTIONS).length)));
    collect();
    runs.decode.push(time(() => (sink += decodeSamplesReply(payload, new Sample(), OPTIONS).samples[0].tokens.length)));
  }
  if (sink === 0) throw new Error("unreachable");
  const m = Object.fromEntries(Object.entries(runs).map(([key, values]) => [key, median(values)])) as Record<keyof typeof runs, number>;
  console.log(
    `medians of ${ROUNDS}: Buffer.copy ${m.copy.toFixed(1)} ms | Buffer.copy into a fresh Buffer ${m.freshCopy.toFixed(1)} ms | ` +
      `encode ${m.encode.toFixed(1)} ms | encode (chunks) ${m.encodeChunks.toFixed(1)} ms | decode ${m.decode.toFixed(1)} ms`,
  );
  console.log(`encode ÷ Buffer.copy = ${(m.encode / m.copy).toFixed(2)} (goal ≤ 4)`);
  console.log(`encode (chunks, replay tensors not copied) ÷ Buffer.copy = ${(m.encodeChunks / m.copy).toFixed(2)} (goal ≤ 4)`);
  console.log(`decode ÷ Buffer.copy = ${(m.decode / m.copy).toFixed(2)} (goal ≤ 3)`);
  console.log(`context: Buffer.copy into a fresh Buffer ÷ Buffer.copy = ${(m.freshCopy / m.copy).toFixed(2)} (first-touch cost of new memory on this host)`);
  console.log(`encode ÷ Buffer.copy into a fresh Buffer = ${(m.encode / m.freshCopy).toFixed(2)}`);

  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "wire-bench-")), "reply.safetensors");
  fs.writeFileSync(file, payload);
  try {
    const child = spawnSync(process.execPath, [...process.execArgv, __filename], { env: { ...process.env, [CHILD_ENV]: file }, encoding: "utf8" });
    if (child.status !== 0) throw new Error(`decode-memory child failed: ${child.stderr}`);
    const memory = JSON.parse(child.stdout) as { payload: number; peakRssExtra: number; heapExtraNoGc: number };
    console.log(`peak extra memory during decode ÷ payload = ${(memory.peakRssExtra / memory.payload).toFixed(2)} (peak RSS bound, goal ≤ 1.2)`);
    console.log(`heap + array buffers after decode, no GC, ÷ payload = ${(memory.heapExtraNoGc / memory.payload).toFixed(2)}`);
  } finally {
    fs.rmSync(path.dirname(file), { recursive: true, force: true });
  }
}

const childFile = process.env[CHILD_ENV];
if (childFile !== undefined) decodeMemoryChild(childFile);
else main();
