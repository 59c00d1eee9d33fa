// A committed record's output pairs are read once, at commit; the samples op reuses that reading. Every read, every
// refusal and every samples reply must be what reading the pairs afresh gives (pure cases, then whole sessions).
import { afterAll, beforeAll, describe, expect, test } from "@jest/globals";
import fc from "fast-check";
import * as lib from "../../../src";
import { startMockBackend, weatherScript, type MockBackend } from "../../../src/backend";
import type { PolicyContext, TrajectoryPolicy } from "../../../src/server/policy";
import { startSessionServer, type RunningSessionServer } from "../../../src/server/session-server";
import { readRecord, rememberRecordOutput, type RecordTokens } from "../../../src/server/samples/turn-samples";
import type { SamplesResult, SessionRecord } from "../../../src/server/types";
import { linearPolicy, type LinearPlan, type LinearTrajectory } from "../../../src/server/v1";
import { TrajectoryForest } from "../../../src/server/v2/forest";
import { createV2Policy } from "../../../src/server/v2/policy";
import type { V2Plan, V2SessionState } from "../../../src/server/v2/serving";
import { PyFloat } from "../../../src/wire/py-json-values";
import { encodeSamplesChunks, WIRE_FIELDS_V1, WIRE_FIELDS_V2 } from "../../../src/wire/samples-codec";

function record(pairs: unknown[], prompt: unknown[] = [1, 2, 3]): SessionRecord {
  return {
    timestamp: 1000,
    request_timestamp: 999,
    method: "POST",
    path: "/v1/chat/completions",
    request: { input_ids: prompt },
    response: { choices: [{ finish_reason: "stop", message: { role: "assistant", content: "" }, meta_info: { output_token_logprobs: pairs } }] },
    status_code: 200,
  };
}

type ReadOutcome = { read: RecordTokens } | { error: string };

function outcome(run: () => RecordTokens): ReadOutcome {
  try {
    return { read: run() };
  } catch (error) {
    return { error: String(error) };
  }
}

/** One output pair, or something that is none (what a record not read by the shell's checks may hold). */
const pairArb: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 8, arbitrary: fc.tuple(fc.oneof(fc.double({ noNaN: true }), fc.integer(), fc.constant(-0)), fc.nat({ max: 151_000 })) },
  {
    weight: 1,
    arbitrary: fc.tuple(
      fc.double().map((x) => new PyFloat(x)),
      fc.nat({ max: 9 }),
    ),
  },
  {
    weight: 1,
    arbitrary: fc.constantFrom<unknown>([null, 3], [0.5, 1.5], [0.5, "7"], "x", null, [0.5], [Number.NaN, 2], { 0: 0.5, 1: 3 }, [0.25, 4, "extra"]),
  },
);

const pairsArb: fc.Arbitrary<unknown[]> = fc
  .tuple(fc.array(pairArb, { maxLength: 12 }), fc.array(fc.nat({ max: 11 }), { maxLength: 2 }))
  .map(([pairs, holes]) => {
    const holed = [...pairs];
    // eslint-disable-next-line @typescript-eslint/no-array-delete -- a hole is what this case feeds the reader
    for (const at of holes) if (at < holed.length) delete holed[at];
    return holed;
  });

describe("a record's output read at commit", () => {
  test("reads and refuses exactly as reading the pairs afresh does (random pairs, holes, non-pairs)", () => {
    fc.assert(
      fc.property(pairsArb, fc.boolean(), (pairs, withPrevious) => {
        const first = record([[-0.5, 1]], [1]);
        const previous = withPrevious ? readRecord(first, 1) : null;
        const fresh = outcome(() => readRecord(record(pairs), 2, previous));
        const remembered = record(pairs);
        rememberRecordOutput(remembered);
        expect(outcome(() => readRecord(remembered, 2, previous))).toEqual(fresh);
        // and again: the reading handed out is a copy, never the one kept
        const again = outcome(() => readRecord(remembered, 2, previous));
        if ("read" in again) {
          again.read.outputIds.push(-1);
          again.read.outputLogProbs.fill(7);
        }
        expect(outcome(() => readRecord(remembered, 2, previous))).toEqual(fresh);
      }),
      { numRuns: 400 },
    );
  });

  test("keeps -0 and PyFloat log-probs as numbers, as the fresh read does", () => {
    const pairs = [
      [-0, 5],
      [new PyFloat(1), 6],
    ];
    const remembered = record(pairs);
    rememberRecordOutput(remembered);
    const read = readRecord(remembered, 1);
    expect(Object.is(read.outputLogProbs[0], -0)).toBe(true);
    expect(read).toEqual(readRecord(record(pairs), 1));
  });

  test("pairs replaced after the commit are read afresh, a refusal included", () => {
    const remembered = record([
      [-0.5, 3],
      [-0.25, 4],
    ]);
    rememberRecordOutput(remembered);
    const meta = (remembered.response as { choices: Array<{ meta_info: { output_token_logprobs: unknown[] } }> }).choices[0].meta_info;
    meta.output_token_logprobs = [[-0.5, 3]];
    expect(readRecord(remembered, 1).outputIds).toEqual([3]);
    meta.output_token_logprobs = [[null, 3]];
    expect(() => readRecord(remembered, 4)).toThrow("record 4: output_token_logprobs[0] is not a [logprob, token_id] pair");
  });
});

/** A deep copy that keeps class instances (PyFloat, PyBigInt) as they are and every own key, symbols included. */
function copyData<T>(value: T): T {
  if (Array.isArray(value)) return value.map(copyData) as T;
  if (value === null || typeof value !== "object" || Object.getPrototypeOf(value) !== Object.prototype) return value;
  const out: Record<PropertyKey, unknown> = {};
  for (const key of Reflect.ownKeys(value)) out[key] = copyData((value as Record<PropertyKey, unknown>)[key]);
  return out as T;
}

/** The same v2 state with every record and delta copied (so nothing committed by the shell is known about them). */
function copyV2State(state: V2SessionState): V2SessionState {
  const forest = new TrajectoryForest(state.forest.cap);
  const copies = new Map<unknown, ReturnType<TrajectoryForest["createNode"]>>();
  for (const node of state.forest.nodes) {
    const init = {
      deltaMessages: copyData(node.deltaMessages),
      tokenIds: node.tokenIds,
      completionSpan: node.completionSpan,
      committedAt: node.committedAt,
      responseId: node.responseId,
      record: copyData(node.record),
      finishReason: node.finishReason,
    };
    copies.set(node, forest.createNode(node.parent === null ? null : copies.get(node.parent)!, init));
  }
  return { forest, activeLeaf: state.activeLeaf === null ? null : copies.get(state.activeLeaf)! };
}

function replyBytes(result: SamplesResult, fields: readonly string[]): Buffer {
  const chunks = encodeSamplesChunks(result.samples, result.sessionMetadata, { emptyReason: result.emptyReason, fields });
  return Buffer.concat(chunks.map((chunk) => Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength)));
}

describe("whole sessions committed by the shell", () => {
  const v2 = createV2Policy();
  const seenV1: Array<[LinearTrajectory, PolicyContext]> = [];
  const seenV2: Array<[V2SessionState, PolicyContext]> = [];
  const v1Capture: TrajectoryPolicy<LinearTrajectory, LinearPlan> = {
    ...linearPolicy,
    collectSamples(state, body, ctx) {
      seenV1.push([state, ctx]);
      return linearPolicy.collectSamples(state, body, ctx);
    },
  };
  const v2Capture: TrajectoryPolicy<V2SessionState, V2Plan> = {
    ...v2,
    collectSamples(state, body, ctx) {
      seenV2.push([state, ctx]);
      return v2.collectSamples(state, body, ctx);
    },
  };
  let backend: MockBackend;
  const servers: RunningSessionServer[] = [];

  beforeAll(async () => {
    backend = await startMockBackend({ process: weatherScript });
    const quiet = { warn: () => undefined, info: () => undefined };
    servers.push(await startSessionServer({ version: "v1", backendUrl: backend.url, logger: quiet, policy: v1Capture }));
    servers.push(await startSessionServer({ version: "v2", backendUrl: backend.url, logger: quiet, policy: v2Capture }));
    const inputSamples = lib.buildWeatherInputSamples(6);
    await lib.runAgenticRetryTrajectories({ version: "v1", inputSamples, sessionServerUrls: [servers[0].url] });
    await lib.runAgenticRetryTrajectories({ version: "v2", inputSamples, sessionServerUrls: [servers[1].url] });
  });

  afterAll(async () => {
    for (const server of servers) await server.close();
    await backend.close();
  });

  test("v1: the samples reply of each trajectory is byte-identical to the one of its records copied", () => {
    expect(seenV1.length).toBe(6);
    for (const [state, ctx] of seenV1) {
      const copied: LinearTrajectory = { ...state, records: state.records.map(copyData) };
      for (const body of [{ max_seq_len: null }, { max_seq_len: 300 }]) {
        const kept = replyBytes(linearPolicy.collectSamples(state, body, ctx), WIRE_FIELDS_V1);
        expect(kept.equals(replyBytes(linearPolicy.collectSamples(copied, body, ctx), WIRE_FIELDS_V1))).toBe(true);
      }
    }
  });

  test("v2: the samples reply of each retried tree is byte-identical to the one of its records copied", () => {
    expect(seenV2.length).toBe(6);
    for (const [state, ctx] of seenV2) {
      expect(state.forest.leaves().length).toBeGreaterThan(1);
      const body = { max_seq_len: null, metadata: { reward: 1 } };
      const kept = replyBytes(v2.collectSamples(state, body, ctx), WIRE_FIELDS_V2);
      expect(kept.equals(replyBytes(v2.collectSamples(copyV2State(state), body, ctx), WIRE_FIELDS_V2))).toBe(true);
    }
  });
});
