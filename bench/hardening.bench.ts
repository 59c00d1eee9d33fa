// Hardening benchmark: what refusing hostile input costs. Peak RSS growth of the session server while it refuses a
// 300 MiB body and a 1 GiB gzip bomb, the time to refuse a 100 MB safetensors header of nested brackets, the samples
// decoder on million-sample and million-tensor replies (and their spellings the key search cannot see), the v2 samples
// op's admission check against the op, and the sessions a 256 MB heap holds before the first 503.
import { spawn } from "node:child_process";
import { createServer, type Server } from "node:http";
import * as path from "node:path";
import { connect, type AddressInfo } from "node:net";
import { createGzip } from "node:zlib";
import { startSessionServer } from "../src/server";
import { DEFAULT_MAX_BODY_BYTES } from "../src/server/bounded-body";
import { decodeSamplesReply, readSafetensors, Sample, SAMPLES_META_TENSOR, Tensor, WIRE_FIELDS_V2, writeSafetensors } from "../src/wire";
import { peakRssTracker } from "./peak-rss";
import { samplesAdmissionRows } from "./samples-admission-rows";

const MiB = 1024 * 1024;
const BODY_BYTES = 300 * MiB;
const BOMB_INFLATED = 1024 * MiB;
const REPLY_CAP = 64 * MiB;
const HEADER_BYTES = 100_000_000;
const SILENT = { warn: () => undefined };

function gc(): void {
  (globalThis as { gc?: () => void }).gc?.();
}

/** Streams `total` bytes of body after `head` on a raw socket (with backpressure) and resolves with the status line. */
function sendLargeBody(url: string, head: string, total: number, chunked: boolean): Promise<string> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname);
    let status = "";
    const piece = Buffer.alloc(MiB, 0x20);
    socket.on("data", (chunk: Buffer) => {
      if (status === "") status = chunk.toString("latin1").split("\r\n")[0];
    });
    socket.on("error", (error) => (status === "" ? reject(error) : resolve(status)));
    socket.on("close", () => resolve(status));
    const pump = async (): Promise<void> => {
      socket.write(head);
      for (let sent = 0; sent < total && !socket.destroyed; sent += piece.length) {
        const framed = chunked ? Buffer.concat([Buffer.from(`${piece.length.toString(16)}\r\n`), piece, Buffer.from("\r\n")]) : piece;
        if (!socket.write(framed)) await new Promise((done) => socket.once("drain", done));
      }
      if (chunked && !socket.destroyed) socket.write("0\r\n\r\n");
      // Give the server the chance to finish its reply, then hang up.
      setTimeout(() => socket.end(), 50);
    };
    socket.on("connect", () => {
      pump().catch(reject);
    });
  });
}

async function gzipBomb(inflated: number): Promise<Buffer> {
  const gzip = createGzip({ level: 9 });
  const out: Buffer[] = [];
  gzip.on("data", (chunk: Buffer) => out.push(chunk));
  const zeros = Buffer.alloc(MiB, 0x20);
  for (let written = 0; written < inflated; written += zeros.length) {
    if (!gzip.write(zeros)) await new Promise((done) => gzip.once("drain", done));
  }
  await new Promise<void>((done) => gzip.end(done));
  return Buffer.concat(out);
}

async function main(): Promise<void> {
  const bomb = await gzipBomb(BOMB_INFLATED);
  const backend: Server = createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      res.writeHead(200, { "content-type": "application/json", "content-encoding": "gzip" });
      res.end(bomb);
    });
  });
  await new Promise<void>((resolve) => backend.listen(0, "127.0.0.1", resolve));
  const backendUrl = `http://127.0.0.1:${(backend.address() as AddressInfo).port}`;
  const server = await startSessionServer({ version: "v1", backendUrl, logger: SILENT, maxReplyBytes: REPLY_CAP });
  const rows: string[] = [];
  try {
    const sessionReply = await fetch(`${server.url}/sessions`, { method: "POST" });
    const { session_id: id } = (await sessionReply.json()) as { session_id: string };
    const path = `/sessions/${id}/v1/chat/completions`;
    const host = new URL(server.url).host;
    const tracker = peakRssTracker();

    // The bomb first: memory freed by an earlier measure would otherwise be reused and hide its growth.
    {
      gc();
      const before = process.memoryUsage.rss();
      tracker.takePeak();
      const reply = await fetch(`${server.url}${path}`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ messages: [{ role: "user", content: "hi" }] }),
      });
      const text = await reply.text();
      const growth = (tracker.takePeak() - before) / MiB;
      const goal = REPLY_CAP / MiB + 16;
      rows.push(
        `refuse a ${(bomb.length / MiB).toFixed(1)} MiB gzip reply inflating to 1 GiB (cap ${REPLY_CAP / MiB} MiB): ${reply.status} ${text}; peak RSS growth ${growth.toFixed(1)} MiB, goal <= cap + 16 = ${goal} MiB (${(growth / goal).toFixed(2)}x of the goal)`,
      );
    }
    for (const chunked of [false, true]) {
      gc();
      const before = process.memoryUsage.rss();
      tracker.takePeak();
      const framing = chunked ? "Transfer-Encoding: chunked" : `Content-Length: ${BODY_BYTES}`;
      const status = await sendLargeBody(
        server.url,
        `POST ${path} HTTP/1.1\r\nHost: ${host}\r\nContent-Type: application/json\r\n${framing}\r\n\r\n`,
        BODY_BYTES,
        chunked,
      );
      const growth = (tracker.takePeak() - before) / MiB;
      // A declared length is refused before reading; a chunked body is buffered up to the limit (64 MiB) first.
      const goal = chunked ? DEFAULT_MAX_BODY_BYTES / MiB + 16 : 16;
      rows.push(
        `refuse a 300 MiB body (${chunked ? "chunked, refused at the 64 MiB limit" : "content-length"}): ${status}; peak RSS growth ${growth.toFixed(1)} MiB, goal <= ${goal} MiB (${(growth / goal).toFixed(2)}x of the goal)`,
      );
    }
  } finally {
    await server.close();
    await new Promise<void>((resolve) => backend.close(() => resolve()));
  }

  const header = Buffer.alloc(HEADER_BYTES, 0x5b);
  header[0] = 0x7b;
  const payload = new Uint8Array(8 + HEADER_BYTES);
  new DataView(payload.buffer).setUint32(0, HEADER_BYTES, true);
  payload.set(header, 8);
  const times: number[] = [];
  let message = "";
  for (let round = 0; round < 7; round += 1) {
    const start = process.hrtime.bigint();
    try {
      readSafetensors(payload);
    } catch (error) {
      message = (error as Error).message;
    }
    times.push(Number(process.hrtime.bigint() - start) / 1e6);
  }
  times.sort((a, b) => a - b);
  const median = times[Math.floor(times.length / 2)];
  rows.push(
    `refuse a 100 MB nested safetensors header: median ${median.toFixed(3)} ms of 7, goal <= 50 ms (${(median / 50).toFixed(4)}x of the goal); "${message}"`,
  );

  rows.push(...decoderRows());
  rows.push(...(await samplesAdmissionRows()));
  // HARDENING_SKIP_CAPACITY=1 leaves out the two capacity children (minutes each) for a quick run of the rest
  if (process.env.HARDENING_SKIP_CAPACITY !== "1") rows.push(...(await capacityRows()));
  for (const row of rows) console.log(row);
}

/** A million-sample reply (every sample all-null, so it fits any header) and a million-tensor header. */
function hostileReplies(): Array<[string, Uint8Array]> {
  const meta = Buffer.from(`{"samples":[${'{"nulls":[]},'.repeat(999_999)}{"nulls":[]}],"session_metadata":{},"empty_reason":null}`, "utf8");
  const samples = writeSafetensors(new Map([[SAMPLES_META_TENSOR, new Tensor("U8", [meta.length], new Uint8Array(meta))]]));
  const entries: string[] = [];
  for (let i = 0; i < 1_000_000; i += 1) entries.push(`"t${i}":{"dtype":"U8","shape":[0],"data_offsets":[0,0]}`);
  const header = Buffer.from(`{${entries.join(",")}}`, "utf8");
  const tensors = new Uint8Array(8 + header.length);
  new DataView(tensors.buffer).setUint32(0, header.length, true);
  tensors.set(header, 8);
  const metaOnly = (text: string): Uint8Array => {
    const bytes = Buffer.from(text, "utf8");
    return writeSafetensors(new Map([[SAMPLES_META_TENSOR, new Tensor("U8", [bytes.length], new Uint8Array(bytes))]]));
  };
  const noNulls = metaOnly(`{"samples":[${"{},".repeat(999_999)}{}],"session_metadata":{},"empty_reason":null}`);
  const empties = metaOnly(`{"samples":[],"session_metadata":{"x":[${"{},".repeat(12_000_000)}{}]},"empty_reason":null}`);
  const escapedHeader = Buffer.from(`{${'"t":{"dtype":"U8","shape":[0],"data_offset\\u0073":[0,0]},'.repeat(999_999)}"t":{}}`, "utf8");
  const escaped = new Uint8Array(8 + escapedHeader.length);
  new DataView(escaped.buffer).setUint32(0, escapedHeader.length, true);
  escaped.set(escapedHeader, 8);
  return [
    [`a 10^6-sample reply (${(samples.length / MiB).toFixed(1)} MiB)`, samples],
    [`a 10^6-tensor reply (${(tensors.length / MiB).toFixed(1)} MiB header)`, tensors],
    [`a 10^6-sample reply without "nulls" (${(noNulls.length / MiB).toFixed(1)} MiB)`, noNulls],
    [`12 M empty objects (${(empties.length / MiB).toFixed(1)} MiB)`, empties],
    [`a 10^6-tensor header with "data_offsets" escaped (${(escaped.length / MiB).toFixed(1)} MiB)`, escaped],
  ];
}

/** Median time and largest heap / peak RSS growth of refusing each hostile reply, 7 rounds each. */
function decoderRows(): string[] {
  const rows: string[] = [];
  const tracker = peakRssTracker();
  for (const [name, payload] of hostileReplies()) {
    const times: number[] = [];
    let heapGrowth = 0;
    let rssGrowth = 0;
    let message = "";
    for (let round = 0; round < 7; round += 1) {
      gc();
      const heapBefore = process.memoryUsage().heapUsed + process.memoryUsage().arrayBuffers;
      const rssBefore = process.memoryUsage.rss();
      tracker.takePeak();
      const start = process.hrtime.bigint();
      try {
        decodeSamplesReply(payload, new Sample(), { fields: WIRE_FIELDS_V2 });
        message = "decoded (not refused)";
      } catch (error) {
        message = (error as Error).message;
      }
      times.push(Number(process.hrtime.bigint() - start) / 1e6);
      heapGrowth = Math.max(heapGrowth, process.memoryUsage().heapUsed + process.memoryUsage().arrayBuffers - heapBefore);
      rssGrowth = Math.max(rssGrowth, tracker.takePeak() - rssBefore);
    }
    times.sort((a, b) => a - b);
    const median = times[3];
    const memory = Math.max(heapGrowth, rssGrowth) / MiB;
    rows.push(
      `refuse ${name}: median ${median.toFixed(2)} ms of 7 (goal < 50 ms, ${(median / 50).toFixed(3)}x), memory growth ${memory.toFixed(2)} MiB ` +
        `(largest of heap and peak RSS; goal < 16 MiB, ${(memory / 16).toFixed(3)}x); "${message}"`,
    );
  }
  return rows;
}

interface CapacityLine {
  stored?: number;
  refused?: number;
  sessions?: number;
  accounted: number;
  baseline: number;
  live?: number;
  message?: string;
}

/** Runs the capacity child under a 256 MB heap; resolves with its lines and how it ended. */
function runCapacityChild(mode: "budget" | "unbounded"): Promise<{ lines: CapacityLine[]; exit: string; seconds: number }> {
  const script = path.join(__dirname, "session-capacity-child.js");
  const started = Date.now();
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ["--expose-gc", "--max-old-space-size=256", script, mode], { stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    child.stdout.on("data", (chunk: Buffer) => (out += chunk.toString()));
    child.stderr.resume();
    const timer = setTimeout(() => child.kill("SIGKILL"), 600_000);
    child.on("exit", (code, signal) => {
      clearTimeout(timer);
      const lines = out
        .split("\n")
        .filter((line) => line.startsWith("{"))
        .map((line) => JSON.parse(line) as CapacityLine);
      resolve({ lines, exit: signal ?? `exit ${code}`, seconds: (Date.now() - started) / 1000 });
    });
  });
}

/**
 * Sessions of ~200 KB history a 256 MB heap holds: with the default budget until the first 503, and with no budget
 * until the process dies (what the heap can hold, with the same tokenizer caches and request overheads), plus the
 * byte view: sessions' accounted bytes (checked against heap growth by the tests) against the heap left after startup.
 */
async function capacityRows(): Promise<string[]> {
  const budget = await runCapacityChild("budget");
  const unbounded = await runCapacityChild("unbounded");
  const last = budget.lines.at(-1);
  const held = last?.sessions ?? 0;
  const died = unbounded.lines.filter((line) => line.stored !== undefined).at(-1)?.stored ?? 0;
  const perSession = last && held > 0 ? last.accounted / held : 0;
  const limit = 256 * MiB;
  const free = last ? limit - last.baseline : 0;
  return [
    `sessions of ~200 KB history in a 256 MB heap: first 503 after ${held} sessions (${budget.seconds.toFixed(0)} s, the process kept serving); ` +
      `without a budget the process died (${unbounded.exit}) after storing ${died} (${unbounded.seconds.toFixed(0)} s): ` +
      `${died > 0 ? ((held / died) * 100).toFixed(0) : "?"}% of what the heap held (goal >= 80%)`,
    `  by bytes: ${held} x ${(perSession / MiB).toFixed(2)} MiB accounted = ${((held * perSession) / MiB).toFixed(1)} MiB of the ` +
      `${(free / MiB).toFixed(1)} MiB heap left after startup (${free > 0 ? (((held * perSession) / free) * 100).toFixed(0) : "?"}%); ` +
      `live heap at the 503: ${last?.live !== undefined ? (last.live / MiB).toFixed(1) : "?"} MiB; "${(last?.message ?? "").slice(0, 160)}"`,
  ];
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
