// Holds what the agent sends to what it sent before its request bodies were built from cached message JSON: whole
// weather trajectories through the fixture, real mock backend and v1/v2 servers, every chat request's bytes hashed.
import { afterAll, beforeAll, describe, expect, test } from "@jest/globals";
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import * as path from "node:path";
import { Agent, type Dispatcher } from "undici";
import { buildWeatherInputSamples, runAgenticRetryTrajectories, type ToolCallFailureMode } from "../../src";
import { startMockBackend, weatherScript, type MockBackend } from "../../src/backend";
import { startSessionServer, type RunningSessionServer } from "../../src/server";
import type { AgentSampling } from "../../src/agent";

interface TrajectoryConfig {
  version: "v1" | "v2";
  stream: boolean;
  cycles: number;
  toolCallFailureMode: ToolCallFailureMode;
  sampling?: AgentSampling;
}

/** The recorded runs (key order matters: each key is the config's JSON). Cycles 3 gives every failure mode two retries. */
const CONFIGS: TrajectoryConfig[] = [];
for (const version of ["v1", "v2"] as const) {
  for (const stream of [true, false]) {
    CONFIGS.push({ version, stream, cycles: 1, toolCallFailureMode: "rollback" });
    for (const mode of ["rollback", "append_tool", "append_user"] as const) CONFIGS.push({ version, stream, cycles: 3, toolCallFailureMode: mode });
  }
}
CONFIGS.push({
  version: "v2",
  stream: true,
  cycles: 2,
  toolCallFailureMode: "append_user",
  sampling: { top_p: 0.5, temperature: 0.7, seed: 7, max_tokens: 96, stop: ["</final_answer>", "é€"] },
});

const RECORDED = JSON.parse(readFileSync(path.join(__dirname, "recorded-request-bodies.json"), "utf8")) as { trajectories: Record<string, string[]> };

/** One line per chat request: method, headers as sent, sha256 and length of the body bytes. */
function requestLine(options: Dispatcher.DispatchOptions): string {
  const body = options.body;
  const bytes = typeof body === "string" ? Buffer.from(body) : Buffer.isBuffer(body) ? body : Buffer.from(body as Uint8Array);
  return `${options.method} ${JSON.stringify(options.headers)} ${createHash("sha256").update(bytes).digest("hex")} ${bytes.length}`;
}

/** Runs two trajectories of a config and returns each session's chat request lines, in call order. */
async function recordTrajectories(serverUrl: string, config: TrajectoryConfig): Promise<string[][]> {
  const bySession = new Map<string, string[]>();
  const agent = new Agent();
  const recording = agent.compose((dispatch) => (options, handler) => {
    if (options.path.endsWith("/chat/completions")) {
      const lines = bySession.get(options.path) ?? [];
      bySession.set(options.path, lines);
      lines.push(requestLine(options));
    }
    return dispatch(options, handler);
  });
  try {
    const runs = await runAgenticRetryTrajectories({
      version: config.version,
      inputSamples: buildWeatherInputSamples(2),
      sessionServerUrls: [serverUrl],
      stream: config.stream,
      cycles: config.cycles,
      toolCallFailureMode: config.toolCallFailureMode,
      sampling: config.sampling,
      dispatcher: recording,
    });
    expect(runs.map((run) => run.failure)).toEqual([undefined, undefined]);
  } finally {
    await agent.close();
  }
  return [...bySession.values()];
}

let backend: MockBackend;
const servers: Partial<Record<TrajectoryConfig["version"], RunningSessionServer>> = {};
beforeAll(async () => {
  backend = await startMockBackend({ process: weatherScript });
  servers.v1 = await startSessionServer({ version: "v1", backendUrl: backend.url });
  servers.v2 = await startSessionServer({ version: "v2", backendUrl: backend.url });
});
afterAll(async () => {
  await Promise.all([servers.v1?.close(), servers.v2?.close()]);
  await backend.close();
});

describe("the agent's chat requests over whole trajectories match the recorded ones byte for byte", () => {
  test("the recording covers every config of this suite and nothing else", () => {
    expect(Object.keys(RECORDED.trajectories)).toEqual(CONFIGS.map((config) => JSON.stringify(config)));
  });

  test.each(CONFIGS.map((config) => [JSON.stringify(config), config] as const))("%s", async (key, config) => {
    const server = servers[config.version];
    if (server === undefined) throw new Error(`no ${config.version} server`);
    const sessions = await recordTrajectories(server.url, config);
    expect(sessions).toHaveLength(2);
    for (const lines of sessions) expect(lines).toEqual(RECORDED.trajectories[key]);
  });
});
