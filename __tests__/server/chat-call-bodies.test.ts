// The two JSON bodies of every chat call as real loopback runs carry them (the fixture's requests, the mock backend's
// replies, with and without routing replay): each reads as the reference path reads it, a reply's kept spelling is
// the reference writer's, its tally is the walk of its tree, and every turn's charge is the walk of what its record adds
// (the history it shares with the stored record it builds on counted as seen, as that record holds it).
// mirrors miles/rollout/session/core.py (json.loads of the request body and of the backend's reply); the reference
// path is the depth scan, then parsePyJson of the text (held to Python's json module in py-json.test.ts).
import { afterAll, beforeAll, describe, expect, jest, test } from "@jest/globals";
import { startMockBackend, weatherScript, type MockBackend } from "../../src/backend";
import { buildWeatherInputSamples, runAgenticRetryTrajectories } from "../../src/fixture";
import * as recordCharge from "../../src/server/record-charge";
import * as retainedSize from "../../src/server/retained-size";
import { retainedBytes, retainedTreeBytes, tallyBytes } from "../../src/server/retained-size";
import { startSessionServer, type SessionServerOptions } from "../../src/server/session-server";
import type { CompletedTurn } from "../../src/server/types";
import { findJsonDepthExcess } from "../../src/wire/json-depth";
// The reader module itself: the servers reach parsePyJsonBytes through py-json.ts, whose re-export reads it from here.
import * as pyJson from "../../src/wire/py-json-read";
import { dumpsPyWriter, parsePyJson, PY_RESPONSE_JSON } from "../../src/wire/py-json";
import { recordingLogger } from "./helpers";
import { referenceScan } from "../wire/support/reference-scan";

interface CapturedBody {
  bytes: Buffer;
  maxDepth: number | undefined;
  keepSpelling: boolean;
}

const bodies: CapturedBody[] = [];
const charges: Array<{ committed: CompletedTurn; charged: number; walked: number }> = [];
/** Turns whose request shared leading messages with the record it builds on. */
let sharedTurns = 0;
let backend: MockBackend;
/** How many times a turn's charge walked its reply's tree (the tally makes that walk unneeded). */
let replyWalks = 0;

const ROUTED = { numLayers: 2, topk: 2, numExperts: 8 };

beforeAll(async () => {
  // every body the servers parse, and every turn's charge, are handed over here too, then go on as usual
  const parse = pyJson.parsePyJsonBytes;
  jest.spyOn(pyJson, "parsePyJsonBytes").mockImplementation((bytes, maxDepth, options) => {
    bodies.push({ bytes: Buffer.from(bytes), maxDepth, keepSpelling: options?.keepSpelling === true });
    return parse(bytes, maxDepth, options);
  });
  const charge = recordCharge.suffixRecordBytes;
  jest.spyOn(recordCharge, "suffixRecordBytes").mockImplementation((committed, shared, responseBytes) => {
    const charged = charge(committed, shared, responseBytes);
    const request = committed.record.request;
    const seen = new Set<object>([...(request.messages as object[]).slice(0, shared.messages), ...(shared.tools ? [request.tools as object] : [])]);
    charges.push({ committed, charged, walked: retainedBytes([committed.record, committed.assistantMessage], seen) });
    if (shared.messages > 0) sharedTurns += 1;
    return charged;
  });
  const walk = retainedSize.retainedTreeBytes;
  jest.spyOn(retainedSize, "retainedTreeBytes").mockImplementation((roots) => {
    replyWalks += 1;
    return walk(roots);
  });
  backend = await startMockBackend({ process: weatherScript, routedExperts: ROUTED });
  const runs: Array<[SessionServerOptions["version"], Partial<SessionServerOptions>]> = [
    ["v1", {}],
    ["v2", {}],
    ["v2", { useRoutingReplay: true, numLayers: ROUTED.numLayers }],
  ];
  for (const [version, options] of runs) {
    const server = await startSessionServer({ version, backendUrl: backend.url, logger: recordingLogger(), ...options });
    try {
      const results = await runAgenticRetryTrajectories({ version, inputSamples: buildWeatherInputSamples(2), sessionServerUrls: [server.url] });
      for (const result of results) if (result.failure !== undefined) throw new Error(`trajectory failed: ${String(result.failure)}`);
    } finally {
      await server.close();
    }
  }
  jest.restoreAllMocks();
}, 60_000);

afterAll(async () => {
  await backend?.close();
});

describe("a chat call's bodies, as real runs carry them", () => {
  test("each reads as the depth scan and parsePyJson read it, and a reply's kept spelling is the reference writer's", () => {
    const replies = bodies.filter((body) => body.keepSpelling);
    expect(replies.length).toBeGreaterThan(20);
    expect(bodies.length - replies.length).toBeGreaterThan(20);
    for (const { bytes, maxDepth, keepSpelling } of bodies) {
      const read = pyJson.parsePyJsonBytes(bytes, maxDepth, { keepSpelling });
      const text = bytes.toString("utf8");
      expect(read.excess).toBe(findJsonDepthExcess(bytes, maxDepth));
      expect(read.value).toStrictEqual(parsePyJson(text));
      if (!keepSpelling) continue;
      // the mock writes its replies compactly: each is kept, as the scan it replaced kept it
      const reference = { canonical: true };
      referenceScan(text, maxDepth ?? 128, reference);
      expect(reference.canonical).toBe(true);
      expect(read.spelled?.text).toBe(text);
      expect(dumpsPyWriter(read.value, PY_RESPONSE_JSON)).toBe(text);
    }
  });

  test("each reply is tallied, and the tally is the walk of its parsed tree", () => {
    for (const { bytes, maxDepth } of bodies.filter((body) => body.keepSpelling)) {
      const read = pyJson.parsePyJsonBytes(bytes, maxDepth, { keepSpelling: true });
      expect(read.tally).toBeDefined();
      expect(tallyBytes(read.tally!)).toBe(retainedTreeBytes([read.value]));
    }
  });

  test("every turn's charge is the walk of what its record and assistant message add to the stored history", () => {
    expect(charges.length).toBeGreaterThan(20);
    expect(sharedTurns).toBeGreaterThan(10); // later turns share the history they repeat
    for (const { charged, walked } of charges) expect(charged).toBe(walked);
    // and each was charged from its reply's tally, not by walking the reply
    expect(replyWalks).toBe(0);
  });
});
