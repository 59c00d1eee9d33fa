// Benchmark child running one party of a chat call's chain in its own process, so each party's CPU is measured alone:
// the mock backend or the v1/v2 session servers (ours), or the bare chain's node:http backend or proxy (the floor).
import * as fs from "node:fs";
import * as http from "node:http";
import type { AddressInfo } from "node:net";
import { Pool } from "undici";
import { startMockBackend, weatherScript } from "../src/backend";
import { startParityEnvironmentInWorker } from "../src/fixture/environment-thread";
import { peakRssTracker } from "./peak-rss";

/** Longest a stop may take before the process exits anyway (it must never be left behind). */
const STOP_GRACE_MS = 5_000;

/**
 * The parties. `mock <latencyMs>` and `servers <backendUrl>` (on a worker thread) are this package's; `bare-backend <latencyMs>` answers
 * every request, after the latency, with a fixed body of the byte length its `x-reply-bytes` header names, and
 * `bare-proxy <backendUrl>` forwards each request unchanged over an undici Pool and pipes the reply back, except one
 * marked `x-bare-local` (a session route: create, view, collect, delete), which it answers itself with a fixed body
 * of the named length, as a session server answers those without the backend.
 */
export type PartyRole = "mock" | "servers" | "bare-backend" | "bare-proxy";

/** Reply to the `stats` command on stdin: this process's CPU time so far and its peak RSS since the previous `stats`. */
export interface ChildStats {
  /** User CPU time of this process so far, in microseconds (all threads). */
  cpuUserUs: number;
  /** System CPU time of this process so far, in microseconds. */
  cpuSystemUs: number;
  /** Peak resident set size since the previous `stats` command, in bytes. */
  peakRssBytes: number;
}

/** What a started party prints as its first stdout line. */
export interface PartyUrls {
  url?: string;
  v1Url?: string;
  v2Url?: string;
}

interface RunningParty {
  urls: PartyUrls;
  reset(): void;
  stop(): Promise<void>;
}

function listen(server: http.Server): Promise<string> {
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`));
  });
}

function closeServer(server: http.Server): Promise<void> {
  server.closeAllConnections();
  return new Promise((resolve) => server.close(() => resolve()));
}

/** Fixed reply bodies by size, built once: the bare backend does no per-request work beyond reading the request. */
const fixedBodies = new Map<number, Buffer>();
function fixedBody(bytes: number): Buffer {
  if (bytes <= 0) return Buffer.alloc(0);
  let body = fixedBodies.get(bytes);
  if (body === undefined) {
    const padding = Math.max(0, bytes - '{"text":""}'.length);
    body = Buffer.from(`{"text":"${"x".repeat(padding)}"}`);
    fixedBodies.set(bytes, body);
  }
  return body;
}

async function startBareBackend(latencyMs: number): Promise<RunningParty> {
  const server = http.createServer((request, response) => {
    const bytes = Number(request.headers["x-reply-bytes"] ?? "256");
    request.resume();
    request.once("end", () => {
      const body = fixedBody(bytes);
      setTimeout(() => response.writeHead(200, { "content-type": "application/json", "content-length": body.length }).end(body), latencyMs);
    });
  });
  server.keepAliveTimeout = 60_000;
  const url = await listen(server);
  return { urls: { url }, reset: () => {}, stop: () => closeServer(server) };
}

async function startBareProxy(backendUrl: string): Promise<RunningParty> {
  const upstream = new Pool(backendUrl, { connections: 1024, pipelining: 1 });
  const server = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.once("end", () => {
      if (request.headers["x-bare-local"] !== undefined) {
        const body = fixedBody(Number(request.headers["x-reply-bytes"] ?? "0"));
        response.writeHead(200, { "content-type": "application/json", "content-length": body.length }).end(body);
        return;
      }
      upstream
        .request({ path: request.url ?? "/", method: request.method as "POST", headers: request.headers, body: Buffer.concat(chunks) })
        .then(async (reply) => {
          const body = Buffer.from(await reply.body.arrayBuffer());
          response
            .writeHead(reply.statusCode, { "content-type": String(reply.headers["content-type"] ?? "application/json"), "content-length": body.length })
            .end(body);
        })
        .catch((error: unknown) => response.writeHead(502).end(String(error)));
    });
  });
  server.keepAliveTimeout = 60_000;
  const url = await listen(server);
  return {
    urls: { url },
    reset: () => {},
    stop: async () => {
      await closeServer(server);
      await upstream.close();
    },
  };
}

async function startOurs(role: "mock" | "servers", argument: string): Promise<RunningParty> {
  if (role === "mock") {
    const backend = await startMockBackend({ process: weatherScript, latencyMs: Number(argument), statsRoutes: true });
    return { urls: { url: backend.url }, reset: () => backend.reset(), stop: () => backend.close() };
  }
  // On a worker thread, as `session-parity run` runs them (with the young generation that thread is given).
  const environment = await startParityEnvironmentInWorker({ env: {}, backendUrl: argument, logger: { warn: () => {} } });
  return { urls: { v1Url: environment.v1Url, v2Url: environment.v2Url }, reset: () => {}, stop: () => environment.stop() };
}

async function startParty(role: PartyRole, argument: string): Promise<RunningParty> {
  switch (role) {
    case "bare-backend":
      return startBareBackend(Number(argument));
    case "bare-proxy":
      return startBareProxy(argument);
    default:
      return startOurs(role, argument);
  }
}

async function main(): Promise<void> {
  const role = process.argv[2] as PartyRole;
  const argument = process.argv[3] ?? "";
  const parentPid = process.ppid;
  let party: RunningParty | null = null;
  let stopping = false;
  const stop = (code: number): void => {
    if (stopping) return;
    stopping = true;
    setTimeout(() => process.exit(code), STOP_GRACE_MS).unref();
    void (party?.stop() ?? Promise.resolve()).finally(() => process.exit(code));
  };
  // Whatever way the parent goes (exit, crash, SIGKILL), this process follows it.
  process.once("SIGTERM", () => stop(0));
  process.once("SIGINT", () => stop(0));
  process.once("SIGHUP", () => stop(0));
  process.stdin.once("end", () => stop(0));
  process.stdin.once("close", () => stop(0));
  process.stdin.once("error", () => stop(1));
  setInterval(() => {
    if (process.ppid !== parentPid) stop(1);
  }, 1_000).unref();

  const peak = peakRssTracker();
  let buffered = "";
  process.stdin.setEncoding("utf8");
  process.stdin.on("data", (chunk: string) => {
    buffered += chunk;
    let newline: number;
    while ((newline = buffered.indexOf("\n")) !== -1) {
      const command = buffered.slice(0, newline).trim();
      buffered = buffered.slice(newline + 1);
      if (command === "stats") {
        const cpu = process.cpuUsage();
        const stats: ChildStats = { cpuUserUs: cpu.user, cpuSystemUs: cpu.system, peakRssBytes: peak.takePeak() };
        process.stdout.write(`${JSON.stringify(stats)}\n`);
      } else if (command === "reset") {
        party?.reset();
        process.stdout.write(`${JSON.stringify({ ok: true })}\n`);
      }
    }
  });

  try {
    party = await startParty(role, argument);
  } catch (error) {
    fs.writeSync(2, `benchmark party ${role}: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  }
  if (stopping) {
    await party.stop();
    return;
  }
  process.stdout.write(`${JSON.stringify(party.urls)}\n`);
}

void main();
