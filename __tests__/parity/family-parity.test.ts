// The weather parity run on the qwen35, glm47, glm53, nemotron3, kimi25, kimi26, minimax_m25, minimax_m27 and inkling families: a mock and v1/v2 session servers started
// for the family (qwen35 on the packaged Qwen3 vocabulary, the others on synthetic checkpoints), the agent's schedule
// following the family's append roles, and v1's training payload bit-identical to v2's with no TITO mismatch.
import { afterAll, beforeAll, describe, expect, test } from "@jest/globals";
import * as fs from "node:fs";
import { buildWeatherInputSamples, checkTrainingPayloadParity, runAgenticRetryTrajectories, startParityEnvironment, type SessionParityRun } from "../../src";
import { checkRetryTopology, weatherScenarioExpectations } from "../../src/matchers";
import { loadTitoModel } from "../../src/tokenizer";
import { getTitoFamily } from "../../src/tokenizer/families";
import { deepseekCheckpoint } from "../tokenizer/deepseek/checkpoint";
import {
  glm47Spec,
  glm53Spec,
  inklingSpec,
  kimi25Spec,
  kimi26Spec,
  minimaxSpec,
  nemotron3Spec,
  writeSyntheticCheckpoint,
  type SyntheticCheckpointSpec,
} from "../tokenizer/synthetic-checkpoint";

const BATCH = 2;
const silent = { info: () => undefined, warn: () => undefined, error: () => undefined };

interface FamilyCase {
  family: string;
  spec: SyntheticCheckpointSpec | null;
  /** A checkpoint directory made for the case instead of a synthetic one (DeepSeek: the real V3 vocabulary). */
  checkpoint?: () => string;
  /** Server default kwargs (default: the fixture's {"enable_thinking": false}). */
  kwargs?: Record<string, unknown>;
  /** What the mock's scripted tool call looks like in the backend's completion text. */
  callMarker: string;
}

const CASES: readonly FamilyCase[] = [
  { family: "qwen35", spec: null, callMarker: "<function=get_weather>" },
  { family: "glm47", spec: glm47Spec(), callMarker: "<tool_call>get_weather<arg_key>" },
  // GLM-5.3 pins enable_thinking=True: the fixture's enable_thinking=false would be refused at start (as in miles)
  { family: "glm53", spec: glm53Spec(), kwargs: {}, callMarker: "<tool_call>get_weather<arg_key>" },
  { family: "nemotron3", spec: nemotron3Spec(), callMarker: "<function=get_weather>" },
  // DeepSeek V3.2 / V4 on the real DeepSeek V3 vocabulary, in chat mode (the fixture's enable_thinking=false) and in
  // thinking mode (the encoders' default: every prompt ends in <think>, the mock writes reasoning before the reply)
  { family: "deepseekv32", spec: null, checkpoint: () => deepseekCheckpoint("deepseek_v32"), callMarker: '<｜DSML｜invoke name="get_weather">' },
  { family: "deepseekv32", spec: null, checkpoint: () => deepseekCheckpoint("deepseek_v32"), kwargs: {}, callMarker: "<｜DSML｜function_calls>" },
  { family: "deepseekv4", spec: null, checkpoint: () => deepseekCheckpoint("deepseek_v4"), callMarker: "<｜DSML｜tool_calls>" },
  { family: "deepseekv4", spec: null, checkpoint: () => deepseekCheckpoint("deepseek_v4"), kwargs: {}, callMarker: '<｜DSML｜invoke name="get_weather">' },
  { family: "kimi25", spec: kimi25Spec(), callMarker: "<|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0<|tool_call_argument_begin|>" },
  { family: "kimi26", spec: kimi26Spec(), callMarker: "<|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0<|tool_call_argument_begin|>" },
  { family: "minimax_m25", spec: minimaxSpec(), callMarker: '<minimax:tool_call>\n<invoke name="get_weather">\n<parameter name="location">' },
  { family: "minimax_m27", spec: minimaxSpec(), callMarker: '<minimax:tool_call>\n<invoke name="get_weather">\n<parameter name="location">' },
  { family: "inkling", spec: inklingSpec(), callMarker: "<|message_model|>get_weather<|content_invoke_tool_json|>" },
];

const directories: string[] = [];
afterAll(() => {
  for (const directory of directories) fs.rmSync(directory, { recursive: true, force: true });
});

describe.each(CASES)("weather parity on $family (kwargs $kwargs)", ({ family, spec, checkpoint, kwargs, callMarker }) => {
  let v1: SessionParityRun[];
  let v2: SessionParityRun[];
  let decodedTokens: string[];

  beforeAll(async () => {
    let hfCheckpoint: string | undefined;
    if (spec !== null || checkpoint !== undefined) {
      hfCheckpoint = checkpoint !== undefined ? checkpoint() : writeSyntheticCheckpoint(spec!, family);
      directories.push(hfCheckpoint);
    }
    const environment = await startParityEnvironment({ env: {}, latencyMs: 0, logger: silent, titoModel: family, hfCheckpoint, chatTemplateKwargs: kwargs });
    try {
      v1 = await runAgenticRetryTrajectories({
        version: "v1",
        inputSamples: buildWeatherInputSamples(BATCH),
        sessionServerUrls: [environment.v1Url],
        titoModel: family,
      });
      v2 = await runAgenticRetryTrajectories({
        version: "v2",
        inputSamples: buildWeatherInputSamples(BATCH),
        sessionServerUrls: [environment.v2Url],
        titoModel: family,
      });
    } finally {
      await environment.stop();
    }
    const { tokenizer } = await loadTitoModel({ titoModel: family, hfCheckpoint, chatTemplateKwargs: kwargs });
    decodedTokens = [...v1, ...v2].map((run) => tokenizer.decode((run.samples[0] as unknown as { tokens: number[] }).tokens));
  }, 60_000);

  test("every trajectory completes on both versions, one sample each", () => {
    expect([...v1, ...v2].map((run) => run.failure ?? run.samples.length)).toEqual(Array(2 * BATCH).fill(1));
  });

  test("the model's ids carry the tool calls in the family's format, and the parser read them back into tool_calls", () => {
    for (const text of decodedTokens) expect(text).toContain(callMarker);
    const first = v1[0].preCollect.records[0] as unknown as { response: { choices: Array<{ message: { tool_calls: Array<{ function: unknown }> } }> } };
    expect(first.response.choices[0].message.tool_calls[0].function).toEqual({ name: "get_weather", arguments: '{"location": "Beijing"}' });
  });

  test("v1's training payload is bit-identical to v2's, and no trajectory reports a TITO mismatch", () => {
    // the scenario's record count, retry tree, agent metadata and round trips for the family's append roles
    const expected = weatherScenarioExpectations(getTitoFamily(family).allowedAppendRoles);
    const options = {
      recordCount: expected.recordCount,
      topology: expected.topology,
      agentMetadata: expected.agentMetadata,
      toolCalls: expected.toolRoundTrips,
    };
    v1.forEach((run, index) => {
      const verdict = checkTrainingPayloadParity(run, v2[index], options);
      expect(verdict.failures).toEqual([]);
      expect(verdict.pass).toBe(true);
      expect(checkRetryTopology(v2[index], expected.topology).failures).toEqual([]);
    });
    for (const run of [...v1, ...v2]) expect((run.sessionMetadata as { tito_session_mismatch?: unknown[] }).tito_session_mismatch ?? []).toEqual([]);
  });

  test("a family without the system append role never sends a mid-session system message", () => {
    if (getTitoFamily(family).allowedAppendRoles.includes("system")) return;
    for (const run of v1) {
      const last = run.preCollect.records[run.preCollect.records.length - 1] as unknown as { request: { messages: Array<{ role: string }> } };
      expect(last.request.messages.slice(1).map((message) => message.role)).not.toContain("system");
    }
  });
});
