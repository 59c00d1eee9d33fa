// The project's own parity proof, through the servers the global setup started: 16 weather trajectories per
// version, the backend's view of them, and the four scenario matchers on every v1/v2 pair (plus precise failures).
import {
  buildWeatherInputSamples,
  checkTrainingPayloadParity,
  runAgenticRetryTrajectories,
  trainingMetadataProjection,
  WEATHER_AGENT_METADATA,
  WEATHER_RETRY_TOPOLOGY,
  WEATHER_TOOL_ROUND_TRIPS,
  type SessionParityRun,
} from "../../src";
import { fetchBackendStats, resetBackendStats, type BackendStatsSnapshot } from "../../src/backend";
import { SESSION_PARITY_SEED } from "../../src/fixture";
import { startSessionServer, type RunningSessionServer, type SamplePicker } from "../../src/server";
import { startMockBackend, weatherScript, type MockBackend, type ProcessFunction } from "../../src/backend";
import { startParityEnvironment, type ParityEnvironment } from "../../src";
import { deepCopySample } from "../../src/wire/sample-copy";

/** The seed fixture's server kwargs: servers alone default to {} (miles' --apply-chat-template-kwargs). */
const SEED_KWARGS = { enable_thinking: false };

const BATCH = 16;
const CALLS_PER_TRAJECTORY = 9;
const WEIGHT_VERSIONS = ["w0", "w1", "w2", "w3", "w4", "w7", "w8"];

/** The URL a global-setup variable publishes; the suite cannot run without it. */
function published(name: string): string {
  const value = process.env[name];
  if (value === undefined || value === "")
    throw new Error(`${name} is not set: run this suite with the project's jest.config.ts (its globalSetup starts the servers)`);
  return value;
}

/** The message of a failing expectation. */
function failureOf(assertion: () => void): string {
  try {
    assertion();
  } catch (error) {
    return (error as Error).message;
  }
  throw new Error("the expectation passed, but it had to fail");
}

/** A copy of a run whose samples and tree can be edited without touching the original. */
function copyRun(run: SessionParityRun): SessionParityRun {
  return {
    ...run,
    samples: run.samples.map(deepCopySample),
    preCollect: JSON.parse(JSON.stringify(run.preCollect)) as SessionParityRun["preCollect"],
    sessionMetadata: JSON.parse(JSON.stringify(run.sessionMetadata)) as SessionParityRun["sessionMetadata"],
  };
}

/**
 * Wraps a process function so requests are answered in waves: each waits (counted in flight by the backend) until
 * `size` requests wait together, or `maxWaitMs` passed since the first of its wave. A driver that really runs `size`
 * trajectories at once then shows a peak of exactly `size`, whatever the machine's speed; a serial one shows 1.
 */
function answerInWaves(inner: ProcessFunction, size: number, maxWaitMs: number): ProcessFunction {
  let waiting: (() => void)[] = [];
  let timer: NodeJS.Timeout | null = null;
  const release = (): void => {
    if (timer !== null) clearTimeout(timer);
    timer = null;
    const wave = waiting;
    waiting = [];
    for (const resume of wave) resume();
  };
  return async (prompt, body) => {
    await new Promise<void>((resolve) => {
      waiting.push(resolve);
      if (waiting.length >= size) release();
      else timer ??= setTimeout(release, maxWaitMs);
    });
    return inner(prompt, body);
  };
}

function chatRequests(stats: BackendStatsSnapshot): Record<string, unknown>[] {
  return stats.requests.flatMap((entry, i) => (entry.path === "/v1/chat/completions" ? [stats.requestLog[i]] : []));
}

describe(`weather parity: ${BATCH} trajectories per version through the global-setup servers`, () => {
  let v1: SessionParityRun[];
  let v2: SessionParityRun[];
  const stats: Record<"v1" | "v2", BackendStatsSnapshot | undefined> = { v1: undefined, v2: undefined };

  beforeAll(async () => {
    const backendUrl = published("SESSION_PARITY_BACKEND_URL");
    published("SESSION_PARITY_V1_URL");
    published("SESSION_PARITY_V2_URL");
    await resetBackendStats(backendUrl);
    v1 = await runAgenticRetryTrajectories({ version: "v1", inputSamples: buildWeatherInputSamples(BATCH) });
    stats.v1 = await fetchBackendStats(backendUrl);
    await resetBackendStats(backendUrl);
    v2 = await runAgenticRetryTrajectories({ version: "v2", inputSamples: buildWeatherInputSamples(BATCH) });
    stats.v2 = await fetchBackendStats(backendUrl);
  });

  test.each(["v1", "v2"] as const)("%s returns one completed run per input sample, in input order", (version) => {
    const runs = version === "v1" ? v1 : v2;
    expect(runs).toHaveLength(BATCH);
    runs.forEach((run, i) => {
      expect(run.failure).toBeUndefined();
      expect(run.version).toBe(version);
      expect(run.samples.map((sample) => [sample.index, sample.rollout_id, sample.status])).toEqual([[i, i, "completed"]]);
    });
    expect(new Set(runs.map((run) => run.preCollect.session_id)).size).toBe(BATCH);
  });

  test.each(["v1", "v2"] as const)(`the global backend saw ${BATCH} x ${CALLS_PER_TRAJECTORY} chat requests for %s, each seeded`, (version) => {
    const seen = stats[version] as BackendStatsSnapshot;
    const chats = chatRequests(seen);
    expect(chats).toHaveLength(BATCH * CALLS_PER_TRAJECTORY);
    expect(seen.requests.filter((entry) => entry.path !== "/v1/chat/completions")).toEqual([]);
    expect(seen.requests.every((entry) => entry.status === 200)).toBe(true);
    expect(chats.filter((body) => body.seed !== SESSION_PARITY_SEED)).toEqual([]);
    expect(seen.currentConcurrent).toBe(0);
  });

  // mirrors miles/utils/test_utils/mock_sglang_server.py (`-1 / 128 * i`): each generation's first log-prob is -0.0,
  // and it reaches the decoded samples of both versions as a negative zero (the payload keeps the sign bit).
  test("every run carries the mock's -0.0 first log-prob end to end, on each generated span", () => {
    for (const run of [...v1, ...v2]) {
      const [sample] = run.samples;
      const logProbs = sample.rollout_log_probs as number[];
      const mask = sample.loss_mask as number[];
      const spanStarts = mask.flatMap((bit, i) => (bit === 1 && (i === 0 || mask[i - 1] === 0) ? [i] : []));
      expect(spanStarts.length).toBeGreaterThan(1);
      for (const start of spanStarts) expect(Object.is(logProbs[start], -0)).toBe(true);
      expect(logProbs.filter((value) => Object.is(value, -0))).toHaveLength(spanStarts.length);
    }
  });

  test("every sample's weight_versions name the 7 generations on its kept path", () => {
    for (const run of [...v1, ...v2]) expect(run.samples[0].weight_versions).toEqual(WEIGHT_VERSIONS);
  });

  test("every v1/v2 pair passes the four matchers and is bitwise equal under the training projection", () => {
    v1.forEach((v1Run, i) => {
      const v2Run = v2[i];
      expect(v1Run).toHaveTrainingPayloadParity(v2Run);
      expect(v2Run).toHaveRetryTopology(WEATHER_RETRY_TOPOLOGY);
      expect(v1Run).toMatchAgentMetadata(WEATHER_AGENT_METADATA);
      expect(v2Run).toMatchAgentMetadata(WEATHER_AGENT_METADATA);
      expect(v1Run).toRoundTripToolCalls(WEATHER_TOOL_ROUND_TRIPS);
      expect(v2Run.preCollect).toRoundTripToolCalls(WEATHER_TOOL_ROUND_TRIPS);
      expect(v1Run.samples[0]).toBeBitwiseEqual(v2Run.samples[0], { metadataProjection: trainingMetadataProjection });
      expect(v1Run).not.toHaveRetryTopology(WEATHER_RETRY_TOPOLOGY); // v1 keeps no tree
      expect(checkTrainingPayloadParity(v1Run, v2Run).failures).toEqual([]);
    });
  });

  describe("negative checks fail with a precise message", () => {
    let keepAll: RunningSessionServer;
    let kept: SessionParityRun;

    beforeAll(async () => {
      // Keeps every leaf in the default picker's order (path length, then node id, descending) without dropping retries.
      const leafOf = (sample: { metadata: Record<string, unknown> }) => sample.metadata.leaf as { node_id: number; path_node_ids: number[] };
      const keepRetries: SamplePicker = (samples) =>
        [...samples].sort((a, b) => leafOf(b).path_node_ids.length - leafOf(a).path_node_ids.length || leafOf(b).node_id - leafOf(a).node_id);
      keepAll = await startSessionServer({
        chatTemplateKwargs: SEED_KWARGS,
        version: "v2",
        backendUrl: published("SESSION_PARITY_BACKEND_URL"),
        samplePicker: keepRetries,
        logger: { warn: () => {} },
      });
      [kept] = await runAgenticRetryTrajectories({ version: "v2", inputSamples: buildWeatherInputSamples(1), sessionServerUrls: [keepAll.url] });
    });
    afterAll(async () => {
      await keepAll?.close();
    });

    test("a v2 server whose picker keeps the retry leaves breaks parity: three samples, and leaf 4 owns the shared prefix", () => {
      expect(kept.failure).toBeUndefined();
      expect(kept).toHaveRetryTopology({ nodes: WEATHER_RETRY_TOPOLOGY.nodes, leaves: WEATHER_RETRY_TOPOLOGY.leaves });
      expect(kept).not.toHaveRetryTopology(WEATHER_RETRY_TOPOLOGY);
      expect(v1[0]).not.toHaveTrainingPayloadParity(kept);
      const message = failureOf(() => expect(v1[0]).toHaveTrainingPayloadParity(kept));
      expect(message).toContain("[sample count] the v2 run returned 3 samples, expected 1");
      expect(message).toContain(
        "[v2 retry topology: selected leaf] the run kept 3 samples, from leaves [8, 5, 4], expected one sample from leaf 8\n    keptLeafIds: length 3 vs 1\n",
      );
      expect(message).toMatch(
        /\[training sample\] v1 samples\[0\] \(left\) is not bitwise equal to v2 samples\[0\] \(right\) under trainingMetadataProjection\n\s+sample\.loss_mask\[0\]: 0x3ff0000000000000 \(1\) vs \+0\n[^]*\d+ differences in total \(the first 10 shown\)$/,
      );
      expect(message).not.toContain("[session metadata]");
    });

    test("a sample whose reward is -0 instead of 0", () => {
      const left = copyRun(v1[3]);
      const right = copyRun(v2[3]);
      left.samples[0].reward = 0;
      right.samples[0].reward = -0;
      const message = failureOf(() => expect(left).toHaveTrainingPayloadParity(right));
      expect(message).toContain("(part training sample):\n");
      expect(message).toContain(
        "[training sample] v1 samples[0] (left) is not bitwise equal to v2 samples[0] (right) under trainingMetadataProjection\n    sample.reward: +0 vs -0\n    1 difference in total",
      );
      expect(failureOf(() => expect(left.samples[0]).toBeBitwiseEqual(right.samples[0], { metadataProjection: trainingMetadataProjection }))).toContain(
        "sample.reward: +0 vs -0",
      );
      right.samples[0].reward = 0;
      expect(left).toHaveTrainingPayloadParity(right);
    });

    test("a tree with one parent changed", () => {
      const run = copyRun(v2[5]);
      const tree = run.preCollect.metadata.tree as { nodes: { id: number; parent: number | null }[] };
      tree.nodes[5].parent = 4;
      const message = failureOf(() => expect(tree).toHaveRetryTopology({ nodes: WEATHER_RETRY_TOPOLOGY.nodes, leaves: WEATHER_RETRY_TOPOLOGY.leaves }));
      expect(message).toContain("First difference: first differing node: tree.nodes[5] is (5, parent 4), expected (5, parent 3)");
      expect(message).toContain("[tree.nodes] node table differs (9 received vs 9 expected nodes)");
      expect(message).toContain("tree.nodes[5].parent: 4 vs 3\n    1 difference in total");
      expect(message).toContain(
        [
          "Received tree:",
          "  0",
          "  `-- 1",
          "      `-- 2",
          "          `-- 3",
          "              |-- 4 [leaf]",
          "              |   `-- 5 [leaf]",
          "              `-- 6",
        ].join("\n"),
      );
      expect(message).toContain(
        [
          "Expected tree:",
          "  0",
          "  `-- 1",
          "      `-- 2",
          "          `-- 3",
          "              |-- 4 [leaf]",
          "              |-- 5 [leaf]",
          "              `-- 6",
        ].join("\n"),
      );
      const parity = failureOf(() => expect(v1[5]).toHaveTrainingPayloadParity(run));
      expect(parity).toContain("[v2 retry topology: tree.nodes] node table differs");
      expect(parity).toContain("tree.nodes[5].parent: 4 vs 3");
    });
  });
});

describe(`concurrency: ${BATCH} trajectories are in flight at once`, () => {
  // The global backend's peak depends on how fast this machine turns requests around; a backend that answers in
  // waves of BATCH makes the peak a property of the driver alone (BATCH when it runs every sample concurrently).
  let backend: MockBackend;
  let environment: ParityEnvironment;

  beforeAll(async () => {
    backend = await startMockBackend({ process: answerInWaves(weatherScript, BATCH, 10_000), latencyMs: 50 });
    environment = await startParityEnvironment({ env: {}, backendUrl: backend.url, logger: { warn: () => {} } });
  });
  afterAll(async () => {
    await environment?.stop();
    await backend?.close();
  });

  test.each(["v1", "v2"] as const)(`%s: ${BATCH} x ${CALLS_PER_TRAJECTORY} seeded chat requests, a peak of ${BATCH} in flight`, async (version) => {
    backend.reset();
    const runs = await runAgenticRetryTrajectories({
      version,
      inputSamples: buildWeatherInputSamples(BATCH),
      sessionServerUrls: [version === "v1" ? environment.v1Url : environment.v2Url],
    });
    expect(runs.map((run) => run.failure ?? run.samples.length)).toEqual(Array(BATCH).fill(1));
    expect(backend.requestLog).toHaveLength(BATCH * CALLS_PER_TRAJECTORY);
    expect(backend.requestLog.filter((body) => body.seed !== SESSION_PARITY_SEED)).toEqual([]);
    expect(backend.maxConcurrent).toBe(BATCH);
    expect(backend.currentConcurrent).toBe(0);
  });
});
