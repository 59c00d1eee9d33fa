// Hardening benchmark: what refusing hostile input costs. Peak RSS growth of the session server while it refuses a
// 300 MiB body and a 1 GiB gzip bomb, and the time to refuse a 100 MB safetensors header of nested brackets.
import { createServer, type Server } from "node:http";
import { connect, type AddressInfo } from "node:net";
import { createGzip } from "node:zlib";
import { startSessionServer } from "../src/server";
import { DEFAULT_MAX_BODY_BYTES } from "../src/server/bounded-body";
import { readSafetensors } from "../src/wire";
import { peakRssTracker } from "./peak-rss";

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

  for (const row of rows) console.log(row);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
