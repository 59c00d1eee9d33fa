// Routing replay over loopback HTTP: what the chat proxy asks the backend for (flags, routed_experts_start_len
// across turns and rollbacks), what the samples op returns, and the refusals (start-up, 422 with state unchanged).
import { routedExpertsBuffer, startMockBackend, type MockBackend, type ProcessFunction } from "../../src/backend";
import { startSessionServer, type RunningSessionServer, type SessionServerOptions } from "../../src/server";
import { decodeSamplesReply, WIRE_FIELDS_V1, WIRE_FIELDS_V2 } from "../../src/wire/samples-codec";
import { Sample } from "../../src/wire/sample";
import { Tensor } from "../../src/wire/tensor";
import { call, chat, createSession, getSession, recordingLogger } from "./helpers";

const ROUTED = { numLayers: 3, topk: 2, numExperts: 8 };
const INDEXER = { numLayers: 2, topk: 3 };
const reply: ProcessFunction = (prompt) =>
  prompt.includes("[bad buffer]") ? { text: "odd", meta_info: { routed_experts: "AAAAAA==" } } : { text: "sunny and warm" };

let backend: MockBackend;
const servers: RunningSessionServer[] = [];

async function server(options: Partial<SessionServerOptions>): Promise<RunningSessionServer> {
  const started = await startSessionServer({ version: "v1", backendUrl: backend.url, logger: recordingLogger(), ...options });
  servers.push(started);
  return started;
}

beforeAll(async () => {
  backend = await startMockBackend({ process: reply, routedExperts: ROUTED, indexerTopk: INDEXER });
});

afterAll(async () => {
  await Promise.all(servers.map((s) => s.close()));
  await backend.close();
});

const USER = { role: "user", content: "weather in Paris?" };

function lastUpstream(): Record<string, unknown> {
  return backend.requestLog[backend.requestLog.length - 1];
}

async function collect(url: string, id: string, version: "v1" | "v2" = "v1"): Promise<{ status: number; text: string; sample: Sample | null }> {
  const res = await call("POST", `${url}/sessions/${id}/samples`, { max_seq_len: null });
  if (res.status !== 200) return { status: res.status, text: res.text, sample: null };
  const decoded = decodeSamplesReply(res.bytes, new Sample(), { fields: version === "v1" ? WIRE_FIELDS_V1 : WIRE_FIELDS_V2 });
  return { status: res.status, text: "", sample: decoded.samples[0] ?? null };
}

function expectedRouting(tokens: readonly number[]): Tensor<"I32"> {
  return new Tensor("I32", [tokens.length - 1, ROUTED.numLayers, ROUTED.topk], routedExpertsBuffer(tokens, 0, ROUTED));
}

describe.each(["v1", "v2"] as const)("%s with additional R3", (version) => {
  // mirrors tests/fast/router/test_sessions.py::TestAdditionR3RequestOffset::test_in_place_offsets_across_turns_and_rollback
  test("offsets follow the checkpoint across turns and a retry, are recorded, and the patches rebuild the full tensor", async () => {
    const s = await server({ version, useRoutingReplay: true, useIndexerReplay: true, useAdditionR3: true, numLayers: ROUTED.numLayers });
    const id = await createSession(s.url);
    const first = await chat(s.url, id, { messages: [USER] });
    expect(first.status).toBe(200);
    expect(lastUpstream()).toMatchObject({ return_routed_experts: true, return_indexer_topk: true, routed_experts_start_len: 0 });
    const checkpoint1: number[] = (await getSession(s.url, id)).metadata.accumulated_token_ids;

    const assistant = first.json<{ choices: { message: Record<string, unknown> }[] }>().choices[0].message;
    const turn2 = (text: string) => [USER, assistant, { role: "user", content: text }];
    expect((await chat(s.url, id, { messages: turn2("and tomorrow?") })).status).toBe(200);
    expect(lastUpstream().routed_experts_start_len).toBe(checkpoint1.length - 1);

    // The retry attaches at (v1: rolls back to) the first checkpoint: the offset moves back with it.
    expect((await chat(s.url, id, { messages: turn2("and the day after?") })).status).toBe(200);
    expect(lastUpstream().routed_experts_start_len).toBe(checkpoint1.length - 1);
    const view = await getSession(s.url, id);
    expect(view.records.map((r) => r.request.routed_experts_start_len)).toEqual([0, checkpoint1.length - 1]);
    // The client never sees the replay payloads; the records keep them.
    expect(first.json<{ choices: { meta_info: Record<string, unknown> }[] }>().choices[0].meta_info.routed_experts).toBeUndefined();

    const { status, sample } = await collect(s.url, id, version);
    expect(status).toBe(200);
    const tokens = sample!.tokens;
    expect(tokens).toEqual(view.metadata.accumulated_token_ids);
    expect(sample!.rollout_routed_experts).toBeBitwiseEqual(expectedRouting(tokens));
    expect(sample!.rollout_indexer_topk!.shape).toEqual([tokens.length - 1, INDEXER.numLayers, INDEXER.topk]);
  });
});

describe("request flags", () => {
  // mirrors tests/fast/router/test_sessions.py::TestAdditionR3RequestOffset::test_retract_request_has_no_start_len
  test("full R3 asks for routed experts without an offset, and carries the last record's tensor", async () => {
    const s = await server({ useRoutingReplay: true, numLayers: ROUTED.numLayers });
    const id = await createSession(s.url);
    expect((await chat(s.url, id, { messages: [USER] })).status).toBe(200);
    const body = lastUpstream();
    expect(body.return_routed_experts).toBe(true);
    expect("routed_experts_start_len" in body).toBe(false);
    expect("return_indexer_topk" in body).toBe(false);
    // Key order as the original builds the body: the replay flag right after return_meta_info.
    const keys = Object.keys(body);
    expect(keys.indexOf("return_routed_experts")).toBe(keys.indexOf("return_meta_info") + 1);
    const { sample } = await collect(s.url, id);
    expect(sample!.rollout_routed_experts).toBeBitwiseEqual(expectedRouting(sample!.tokens));
    expect(sample!.rollout_indexer_topk).toBeNull();
  });

  // mirrors tests/fast/router/test_sessions.py::TestAdditionR3RequestOffset::test_in_place_without_replay_sends_neither_field
  test("additional R3 without routing replay sends neither field", async () => {
    const s = await server({ useAdditionR3: true });
    const id = await createSession(s.url);
    expect((await chat(s.url, id, { messages: [USER] })).status).toBe(200);
    const body = lastUpstream();
    expect("return_routed_experts" in body).toBe(false);
    expect("routed_experts_start_len" in body).toBe(false);
  });

  test("routing replay without num_layers does not start, nor does a bad layer count", async () => {
    await expect(startSessionServer({ version: "v1", backendUrl: backend.url, useRoutingReplay: true })).rejects.toThrow(
      "useRoutingReplay (--use-rollout-routing-replay) needs numLayers (--num-layers): routed-experts buffers are (tokens, num_layers, topk)",
    );
    await expect(startSessionServer({ version: "v2", backendUrl: backend.url, useRoutingReplay: true, numLayers: 0 })).rejects.toThrow(
      "numLayers (--num-layers) must be a positive integer, got 0",
    );
  });

  test("the mock refuses a routed_experts_start_len beyond the prompt with 400 (SGLang's bound)", async () => {
    const res = await call("POST", `${backend.url}/v1/chat/completions`, { input_ids: [1, 2, 3], return_routed_experts: true, routed_experts_start_len: 4 });
    expect(res.status).toBe(400);
    expect(res.text).toContain("routed_experts_start_len must be an integer in [0, 3] (the prompt length), got 4");
  });
});

describe.each(["v1", "v2"] as const)("%s bad input", (version) => {
  // mirrors miles/rollout/generate_utils/generate_endpoint_utils.py::_decode_topk_buffer via miles/rollout/session/core.py::collect_samples (422 text/plain)
  test("a buffer that does not divide into rows is a 422 with numpy's text; the session is unchanged and still serves", async () => {
    const s = await server({ version, useRoutingReplay: true, numLayers: ROUTED.numLayers });
    const id = await createSession(s.url);
    expect((await chat(s.url, id, { messages: [{ role: "user", content: "[bad buffer]" }] })).status).toBe(200);
    const before = await getSession(s.url, id);
    const rows = (before.metadata.accumulated_token_ids as number[]).length - 1;
    const { status, text } = await collect(s.url, id, version);
    expect(status).toBe(422);
    // Both versions answer with the assembly text alone, as miles does (v2 logs which leaf failed).
    expect(text).toBe(`cannot reshape array of size 1 into shape (${rows},${ROUTED.numLayers},0)`);
    expect(await getSession(s.url, id)).toEqual(before);
    expect((await call("GET", `${s.url}/health`)).status).toBe(200);
  });
});
