// The session-verify gate: its rules on hand-built samples, the reference v1/v2 servers passing it for 3 schedule
// cycles under every tool-call failure mode, and a planted server that re-tokenizes assistant turns failing it.
// Mirrors miles' utils/test_utils/session_verify_agent.py (generate) and session_verify_runner.py
// (assert_session_verify_metrics); the per-family thresholds are those of tests/e2e/sglang/test_session_server_multi_role/.
import { afterAll, beforeAll, describe, expect, test } from "@jest/globals";
import { TOOL_CALL_FAILURE_MODES } from "../../src/agent";
import { startMockBackend, weatherScript, type MockBackend } from "../../src/backend";
import { MOCK_REASONING_TEXT } from "../../src/backend/thinking-mode";
import { buildWeatherInputSamples } from "../../src/fixture/input-samples";
import { runAgenticRetryTrajectories } from "../../src/fixture/run-trajectories";
import type { SessionParityRun } from "../../src/fixture/types";
import {
  checkSessionVerifyGate,
  QWEN3_SPECIAL_TOKEN_IDS,
  requiredDriverEvents,
  weatherAgentMetadata,
  weatherDriverEvents,
  weatherRecordCount,
  weatherRetryTopology,
  WEATHER_AGENT_METADATA,
  WEATHER_RECORD_COUNT,
  WEATHER_RETRY_TOPOLOGY,
} from "../../src/matchers";
import { startSessionServer, type RunningSessionServer } from "../../src/server";
import { loadTokenizer } from "../../src/tokenizer/load";
import { Sample } from "../../src/wire/sample";
import { retokenizingV2Policy } from "./retokenizing-server";

jest.setTimeout(120_000);

const EVENTS = weatherDriverEvents(1);

function sample(metadata: Record<string, unknown>, tokens: number[] = [1, 2, 3]): Sample {
  return new Sample({ tokens, response_length: 1, loss_mask: [1], metadata: { tito_model: "qwen3", driver_events: EVENTS, ...metadata } });
}

function mismatch(type: string, segment: number, expected = "a", actual = "b"): Record<string, unknown> {
  return { type, segment_index: segment, expected_text: expected, actual_text: actual, detail: "" };
}

describe("the gate's rules on hand-built samples", () => {
  test("a clean batch passes every part", () => {
    const verdict = checkSessionVerifyGate([sample({ tito_session_mismatch: [] }), sample({ tito_session_mismatch: [] })]);
    expect(verdict.failures).toEqual([]);
    expect(verdict.checkedParts).toEqual([
      "tito_session_mismatch present",
      "forbidden mismatches",
      "required driver events",
      "append_tool in batch",
      "assistant_text ratio",
    ]);
  });

  test("a missing report fails naming the sample", () => {
    const verdict = checkSessionVerifyGate([sample({ tito_session_mismatch: [] }), sample({})]);
    expect(verdict.failures.map((f) => f.part)).toEqual(["tito_session_mismatch present"]);
    expect(verdict.failures[0].message).toContain("sample 1 has no tito_session_mismatch in its metadata");
  });

  test("a forbidden mismatch names the sample, the type and the token span of its segment", () => {
    // <|im_start|> user-text <|im_end|> <|im_start|> assistant-text <|im_end|>: segment 4 is the assistant text, ids [5, 8)
    const [imStart, imEnd] = [QWEN3_SPECIAL_TOKEN_IDS[1], QWEN3_SPECIAL_TOKEN_IDS[2]];
    const ids = [imStart, 10, 11, imEnd, imStart, 20, 21, 22, imEnd];
    const verdict = checkSessionVerifyGate([sample({ tito_session_mismatch: [mismatch("non_assistant_text", 4, "x", "y")], accumulated_token_ids: ids })]);
    expect(verdict.failures.map((f) => f.part)).toEqual(["forbidden mismatches"]);
    expect(verdict.failures[0].message).toContain('sample 0: non_assistant_text at token span [5, 8) (segment 4): expected "x", actual "y"');
    const structural = checkSessionVerifyGate([
      sample({ tito_session_mismatch: [{ ...mismatch("special_token_count", -1), detail: "segment count differs: expected 9, got 7" }] }),
    ]);
    expect(structural.failures[0].message).toContain(
      "sample 0: special_token_count at token span [0, 3) (the whole sequence: segment count differs: expected 9, got 7)",
    );
  });

  test("required driver events follow the allowed roles; the batch needs one append_tool", () => {
    expect(requiredDriverEvents(["tool"])).toEqual(["rollback"]);
    expect(requiredDriverEvents(["tool", "user", "system", "assistant"])).toEqual(["rollback", "append_user", "append_system", "append_assistant"]);
    const noSystem = sample({ tito_session_mismatch: [], driver_events: ["initial", "append_tool", "append_user", "rollback", "append_assistant"] });
    expect(checkSessionVerifyGate([noSystem]).failures.map((f) => f.message)).toEqual([
      "every sample must hold [rollback, append_user, append_system, append_assistant] for append roles [tool, user, system, assistant]:\n    - sample 0 lacks driver events [append_system]",
    ]);
    expect(checkSessionVerifyGate([noSystem], { allowedAppendRoles: ["tool", "user", "assistant"] }).pass).toBe(true);
    const noTool = sample({ tito_session_mismatch: [], driver_events: ["initial", "rollback"] });
    expect(checkSessionVerifyGate([noTool], { allowedAppendRoles: ["tool"] }).failures.map((f) => f.part)).toEqual(["append_tool in batch"]);
  });

  test("the assistant_text ratio is gated by the family threshold: qwen3 0.25, default 0.2, an explicit one wins", () => {
    const batch = (bad: number, of: number, titoModel = "qwen3"): Sample[] =>
      Array.from({ length: of }, (_, i) => sample({ tito_model: titoModel, tito_session_mismatch: i < bad ? [mismatch("assistant_text", 2)] : [] }));
    expect(checkSessionVerifyGate(batch(1, 4)).pass).toBe(true); // 0.25 <= 0.25 (test_qwen3.py)
    expect(checkSessionVerifyGate(batch(1, 4, "glm47")).failures[0].message).toMatch(
      /^assistant_text mismatch ratio 1\/4=0\.250 exceeds the glm47 threshold 0\.2:\n {4}- sample 0: assistant_text at segment 2/,
    );
    expect(checkSessionVerifyGate(batch(2, 4)).pass).toBe(false);
    expect(checkSessionVerifyGate(batch(4, 4, "nemotron3")).pass).toBe(true); // test_nemotron3.py rides at 1.0
    expect(checkSessionVerifyGate(batch(1, 4), { assistantTextThreshold: 0 }).pass).toBe(false);
  });

  test("values the gate cannot read are usage failures", () => {
    expect(checkSessionVerifyGate([]).failures[0]).toMatchObject({ part: "batch", usage: true });
    expect(checkSessionVerifyGate([{ tokens: [] }]).failures[0].message).toBe("item 0 is neither a Sample nor a run of runAgenticRetryTrajectories");
    expect(() => expect([{}]).toPassSessionVerifyGate()).toThrow(TypeError);
  });

  test("QWEN3_SPECIAL_TOKEN_IDS are the ids the real Qwen3 tokenizer flags special", async () => {
    const tokenizer = await loadTokenizer();
    expect([...tokenizer.specialIds].sort((a, b) => a - b)).toEqual([...QWEN3_SPECIAL_TOKEN_IDS]);
  });
});

describe("the weather expectations for every cycle count", () => {
  test("one cycle gives the pinned constants", () => {
    expect(weatherRetryTopology(1)).toEqual(WEATHER_RETRY_TOPOLOGY);
    expect(weatherAgentMetadata(1)).toEqual(WEATHER_AGENT_METADATA);
    expect(weatherRecordCount(1)).toBe(WEATHER_RECORD_COUNT);
    for (const mode of TOOL_CALL_FAILURE_MODES) expect(weatherRetryTopology(1, mode)).toEqual(WEATHER_RETRY_TOPOLOGY);
  });

  test("three cycles under rollback: two more branches from the failure re-inferences", () => {
    const topology = weatherRetryTopology(3, "rollback");
    expect(topology.leaves.map(([id]) => id)).toEqual([4, 5, 6, 10, 11, 15, 18]);
    expect(topology.selectedLeaf).toBe(18);
    expect(weatherRecordCount(3, "rollback")).toBe(13);
    expect(weatherRecordCount(3, "append_tool")).toBe(15);
  });
});

describe("the reference servers pass the gate for --cycles 3 under each failure mode", () => {
  let backend: MockBackend;
  const servers: RunningSessionServer[] = [];
  beforeAll(async () => {
    backend = await startMockBackend({ process: weatherScript });
    // the one default of every entry point; the last server runs miles' own default ({}: thinking on), where the mock
    // thinks as the model would (see the last test)
    const chatTemplateKwargs = { enable_thinking: false };
    const quiet = { warn: () => undefined };
    for (const version of ["v1", "v2"] as const)
      servers.push(await startSessionServer({ version, backendUrl: backend.url, chatTemplateKwargs, logger: quiet }));
    servers.push(await startSessionServer({ version: "v2", backendUrl: backend.url, chatTemplateKwargs, policy: retokenizingV2Policy(), logger: quiet }));
    servers.push(await startSessionServer({ version: "v2", backendUrl: backend.url, chatTemplateKwargs: {}, logger: quiet }));
  });
  afterAll(async () => {
    for (const server of servers) await server.close();
    await backend.close();
  });

  const run = (server: RunningSessionServer, toolCallFailureMode: (typeof TOOL_CALL_FAILURE_MODES)[number], batch = 3): Promise<SessionParityRun[]> =>
    runAgenticRetryTrajectories({
      version: server.version,
      inputSamples: buildWeatherInputSamples(batch),
      sessionServerUrls: [server.url],
      cycles: 3,
      toolCallFailureMode,
    });

  test.each(TOOL_CALL_FAILURE_MODES)("%s: v1 and v2 pass the gate, and v2 grows the expected retry tree and counters", async (mode) => {
    const [v1Runs, v2Runs] = await Promise.all([run(servers[0], mode), run(servers[1], mode)]);
    for (const r of [...v1Runs, ...v2Runs]) expect(r.failure).toBeUndefined();
    expect(v1Runs).toPassSessionVerifyGate();
    expect(v2Runs).toPassSessionVerifyGate();
    expect([...v1Runs, ...v2Runs]).toPassSessionVerifyGate({ assistantTextThreshold: 0 });
    for (const r of v2Runs) {
      expect(r).toHaveRetryTopology(weatherRetryTopology(3, mode));
      expect(r).toMatchAgentMetadata(weatherAgentMetadata(3, mode));
      expect(r.preCollect.records).toHaveLength(weatherRecordCount(3, mode));
    }
  });

  test("a v2 server that re-tokenizes its tool-call turns fails the gate, naming the assistant_text mismatch and its span", async () => {
    const runs = await run(servers[2], "append_tool");
    for (const r of runs) expect(r.failure).toBeUndefined();
    expect(runs).not.toPassSessionVerifyGate();
    let message = "";
    try {
      expect(runs).toPassSessionVerifyGate();
    } catch (error) {
      message = (error as Error).message;
    }
    expect(message).toContain("The batch fails the session-verify gate (part assistant_text ratio)");
    expect(message).toMatch(
      /assistant_text mismatch ratio 3\/3=1\.000 exceeds the qwen3 threshold 0\.25:\n {4}- sample 0 \(v2, session \w+\): assistant_text at token span \[\d+, \d+\) \(segment \d+\)/,
    );
    // both texts are quoted around their first difference: the space after the colon the re-serialization lost
    expect(message).toContain('expected ..." Beijing.\\n<tool_call>\\n{\\"name\\": \\"get_weather\\", \\"arguments\\"');
    expect(message).toContain('actual ..." Beijing.\\n<tool_call>\\n{\\"name\\":\\"get_weather\\",\\"arguments\\":{');
  });

  test("with miles' server default kwargs ({}) the mock thinks as the model would, and the canonical render agrees", async () => {
    const runs = await run(servers[3], "rollback");
    for (const r of runs) expect(r.failure).toBeUndefined();
    // every sample carries the reasoning block the model wrote (before the mock thought, the canonical render had an
    // empty think block the model never wrote, and every sample an assistant_text mismatch)
    for (const r of runs) for (const sample of r.samples) expect(sample.response).toContain(`<think>\n${MOCK_REASONING_TEXT}`);
    expect(checkSessionVerifyGate(runs).failures).toEqual([]);
    expect(runs).toPassSessionVerifyGate({ assistantTextThreshold: 0 });
  });
});
