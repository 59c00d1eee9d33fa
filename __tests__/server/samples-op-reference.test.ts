// The whole samples op (v1 and v2) on sessions recorded through real loopback servers: the reply bytes must be the
// reference path's (leaves assembled alone, the spread-built post-processor, the map-based encoder), including
// retries that branch the tree, max_seq_len cuts, routed-experts and indexer replay, and custom pickers and hooks.
import { afterAll, beforeAll, describe, expect, jest, test } from "@jest/globals";
import { startMockBackend, weatherScript, type MockBackend } from "../../src/backend";
import { buildWeatherInputSamples, runAgenticRetryTrajectories } from "../../src/fixture";
import { parseSamplesBody } from "../../src/server/chat-request";
import type { AnyTrajectoryPolicy, PolicyContext } from "../../src/server/policy";
import { startSessionServer, type RunningSessionServer, type SessionServerOptions } from "../../src/server/session-server";
import { SessionShell } from "../../src/server/session-shell";
import type { SamplesRequestBody } from "../../src/server/types";
import type { LinearTrajectory } from "../../src/server/v1/linear-trajectory";
import { dropRetries } from "../../src/server/v2/drop-retries";
import type { SamplePicker, SamplePostprocessor } from "../../src/server/v2/hook-types";
import { createV2Policy } from "../../src/server/v2/policy";
import type { V2SessionState } from "../../src/server/v2/serving";
import { concatChunks, encodeSamplesChunks } from "../../src/wire";
import { recordingLogger } from "./helpers";
import { referenceV1Reply, referenceV2Reply } from "./support/samples-op-reference";

interface Captured {
  policy: AnyTrajectoryPolicy;
  state: unknown;
  body: SamplesRequestBody;
  ctx: PolicyContext;
}

/** What the shell holds that the capture reads (private fields, read in this test only). */
interface ShellInternals {
  policy: AnyTrajectoryPolicy;
  ctx: PolicyContext;
  live(id: string): { state: unknown };
}

const captured: Captured[] = [];
let backend: MockBackend;
const servers: RunningSessionServer[] = [];

const ROUTED = { numLayers: 2, topk: 2, numExperts: 8 };
const INDEXER = { numLayers: 2, topk: 2 };

beforeAll(async () => {
  // Every samples op the servers run hands its inputs over here too, then runs as usual.
  const shell = SessionShell.prototype as unknown as { samples: (this: ShellInternals, res: unknown, id: string, body: Buffer) => void };
  const original = shell.samples;
  jest.spyOn(shell, "samples").mockImplementation(function (this: ShellInternals, res, id, body) {
    const parsed = parseSamplesBody(JSON.parse(body.toString("utf8")), this.policy.version === "v2");
    captured.push({ policy: this.policy, state: this.live(id).state, body: parsed, ctx: this.ctx });
    original.call(this, res, id, body);
  });
  backend = await startMockBackend({ process: weatherScript, routedExperts: ROUTED, indexerTopk: INDEXER });
  const runs: Array<[SessionServerOptions["version"], Partial<SessionServerOptions>]> = [
    ["v1", {}],
    ["v2", {}],
    ["v1", { useRoutingReplay: true, useIndexerReplay: true, numLayers: ROUTED.numLayers }],
    ["v2", { useRoutingReplay: true, useIndexerReplay: true, numLayers: ROUTED.numLayers }],
    ["v2", { useRoutingReplay: true, useAdditionR3: true, numLayers: ROUTED.numLayers }],
  ];
  for (const [version, options] of runs) {
    const server = await startSessionServer({ version, backendUrl: backend.url, logger: recordingLogger(), ...options });
    servers.push(server);
    const results = await runAgenticRetryTrajectories({ version, inputSamples: buildWeatherInputSamples(2), sessionServerUrls: [server.url] });
    expect(results.every((run) => run.failure === undefined || run.failure === null)).toBe(true);
  }
}, 120_000);

afterAll(async () => {
  jest.restoreAllMocks();
  await Promise.all(servers.map((server) => server.close()));
  await backend.close();
});

/** What the compared replies held, so the test shows it reached each case. */
const reached = new Set<string>();

function newReply(policy: AnyTrajectoryPolicy, c: Captured, body: SamplesRequestBody): Buffer {
  const result = policy.collectSamples(c.state, body, c.ctx);
  if (result.emptyReason !== null) reached.add(result.emptyReason);
  for (const sample of result.samples) {
    reached.add(sample.status);
    if (sample.rollout_routed_experts !== null) reached.add("routed");
    if (sample.rollout_indexer_topk !== null) reached.add("indexer");
  }
  if (result.samples.length > 1) reached.add("several samples");
  return Buffer.from(concatChunks(encodeSamplesChunks(result.samples, result.sessionMetadata, { emptyReason: result.emptyReason, fields: policy.wireFields })));
}

/**
 * max_seq_len values for one session: none, one before the first turn ends, one past everything, and for each stored
 * turn one that keeps a single output token of it and one at its end.
 */
function cuts(records: ReadonlyArray<{ request: Record<string, unknown> }>): Array<number | null> {
  const out: Array<number | null> = [null, 40, 100_000];
  for (const record of records.slice(0, 4)) {
    const prompt = (record.request.input_ids as number[]).length;
    out.push(prompt + 1, prompt + 3);
  }
  return out;
}

const keepAll: SamplePicker = (samples) => samples;
const reverse: SamplePicker = (samples) => [...samples].reverse();
const identity: SamplePostprocessor = (samples) => samples;

describe("the samples op writes the reference bytes", () => {
  test("sessions were recorded: v1 and v2, plain and with replay, v2 trees that retries branched", () => {
    expect(captured.filter((c) => c.policy.version === "v1")).toHaveLength(4);
    expect(captured.filter((c) => c.policy.version === "v2")).toHaveLength(6);
    const branched = captured.filter((c) => c.policy.version === "v2" && (c.state as V2SessionState).forest.leaves().length > 1);
    expect(branched).toHaveLength(6);
  });

  test("v1: every recorded session, without and with max_seq_len cuts", () => {
    for (const c of captured.filter((entry) => entry.policy.version === "v1")) {
      for (const max of cuts((c.state as LinearTrajectory).records)) {
        const body = { ...c.body, max_seq_len: max };
        const reference = Buffer.from(referenceV1Reply(c.state as LinearTrajectory, body, c.ctx, c.policy.view(c.state as never, c.ctx).metadata));
        expect(newReply(c.policy, c, body).equals(reference)).toBe(true);
      }
    }
  });

  test("v2: default hooks, keep-all and reversing pickers, an identity post-processor, with and without cuts", () => {
    const variants: Array<[AnyTrajectoryPolicy | null, SamplePicker, SamplePostprocessor | null]> = [
      [null, dropRetries, null],
      [createV2Policy({ samplePicker: keepAll }), keepAll, null],
      [createV2Policy({ samplePicker: reverse }), reverse, null],
      [createV2Policy({ samplePicker: keepAll, samplePostprocessor: identity }), keepAll, identity],
    ];
    for (const c of captured.filter((entry) => entry.policy.version === "v2")) {
      const state = c.state as V2SessionState;
      const records = (state.activeLeaf ?? state.forest.leaves()[0]).pathNodes().map((node) => node.record);
      for (const [policy, picker, postprocessor] of variants) {
        for (const max of cuts(records)) {
          const body = { ...c.body, max_seq_len: max };
          const reference = Buffer.from(referenceV2Reply(c.state as V2SessionState, body, c.ctx, picker, postprocessor));
          expect(newReply(policy ?? c.policy, c, body).equals(reference)).toBe(true);
        }
      }
      // without the agent's metadata too
      const bare = { ...c.body, metadata: undefined };
      expect(newReply(c.policy, c, bare).equals(Buffer.from(referenceV2Reply(c.state as V2SessionState, bare, c.ctx, dropRetries)))).toBe(true);
    }
    expect([...reached].sort()).toEqual(["all_truncated", "completed", "indexer", "routed", "several samples", "truncated"]);
  });
});
