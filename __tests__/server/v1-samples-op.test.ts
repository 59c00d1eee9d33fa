// The v1 samples op over HTTP: golden three-turn payload, max_seq_len truncation, empty replies, 422 lane.
// Expected values are rebuilt independently from the session's records (GET) and the real Qwen3 decoder.
import { buildInitialMessages, MOCK_TOOL_RESULTS, USER_FOLLOWUP_TEXT, WEATHER_TOOLS } from "../../src/agent/texts";
import { startMockBackend, weatherScript, type MockBackend } from "../../src/backend";
import { assembleTrajectorySample, linearPolicy, startSessionServer, type RunningSessionServer, type TrajectoryPolicy } from "../../src/server";
import type { LinearPlan, LinearTrajectory } from "../../src/server/v1";
import { currentTokenIds } from "../../src/server/v1";
import { loadTokenizer } from "../../src/tokenizer";
import type { ChatMessage, Tokenizer } from "../../src/tokenizer/types";
import { Sample } from "../../src/wire/sample";
import { decodeSamplesReply, WIRE_FIELDS_V1 } from "../../src/wire/samples-codec";
import { assistantOf, call, chat, createSession, getSession, recordingLogger } from "./helpers";

/** A `max_seq_len` no test uses otherwise: the test policy aligns against a wrong id list when it sees it. */
const CORRUPT = 987654321;

/** A test policy: v1, except that `max_seq_len: CORRUPT` makes the samples op align against a wrong id list. */
const corruptiblePolicy: TrajectoryPolicy<LinearTrajectory, LinearPlan> = {
  ...linearPolicy,
  collectSamples(state, body, ctx) {
    if (body.max_seq_len !== CORRUPT) return linearPolicy.collectSamples(state, body, ctx);
    const { sample, emptyReason } = assembleTrajectorySample(state.records, [...currentTokenIds(state), 99], {
      decode: (ids) => ctx.tokenizer.decode(ids),
      maxTrimTokens: 0,
      maxSeqLen: null,
    });
    return { samples: sample ? [sample] : [], sessionMetadata: {}, emptyReason };
  },
};

let backend: MockBackend;
let server: RunningSessionServer;
let tokenizer: Tokenizer;
let sessionId: string;

beforeAll(async () => {
  tokenizer = await loadTokenizer();
  backend = await startMockBackend({ process: weatherScript, tokenizer });
  server = await startSessionServer({ version: "v1", backendUrl: backend.url, logger: recordingLogger(), policy: corruptiblePolicy });
  sessionId = await createSession(server.url);
  const history: ChatMessage[] = buildInitialMessages();
  const steps: ChatMessage[][] = [
    [],
    [{ role: "tool", tool_call_id: "call00000", content: MOCK_TOOL_RESULTS[0] }],
    [{ role: "user", content: USER_FOLLOWUP_TEXT }],
  ];
  for (const step of steps) {
    history.push(...step);
    const reply = await chat(server.url, sessionId, { messages: history, tools: WEATHER_TOOLS });
    if (reply.status !== 200) throw new Error(reply.text);
    history.push(assistantOf(reply));
  }
});

afterAll(async () => {
  await server.close();
  await backend.close();
});

async function collect(id: string, body: Record<string, unknown>) {
  const reply = await call("POST", `${server.url}/sessions/${id}/samples`, body);
  return reply;
}

function decoded(bytes: Uint8Array) {
  return decodeSamplesReply(bytes, new Sample(), { fields: WIRE_FIELDS_V1 });
}

interface Turn {
  prompt: number[];
  output: number[];
  logprobs: number[];
}

function turnsOf(records: Record<string, any>[]): Turn[] {
  return records.map((r) => {
    const pairs: [number, number][] = r.response.choices[0].meta_info.output_token_logprobs;
    // The GET JSON writes the mock's first log-prob (-0.0, its `-i/128` rule) as 0, so the sign comes from the rule
    // while the values are still checked against the records.
    const logprobs = pairs.map((p, i) => {
      expect(i === 0 ? p[0] === 0 : Object.is(p[0], -i / 128)).toBe(true);
      return -i / 128;
    });
    return { prompt: r.request.input_ids, output: pairs.map((p) => p[1]), logprobs };
  });
}

test("golden three-turn sample: tokens, loss mask with zeros over observations, log-probs, text, lifecycle, versions", async () => {
  const view = await getSession(server.url, sessionId);
  const reply = await collect(sessionId, { max_seq_len: null });
  expect(reply.status).toBe(200);
  expect(reply.headers["content-type"]).toBe("application/octet-stream");
  const { samples, session_metadata, empty_reason } = decoded(reply.bytes);
  expect(empty_reason).toBeNull();
  expect(session_metadata).toEqual(view.metadata);
  expect(samples).toHaveLength(1);
  const sample = samples[0];

  const turns = turnsOf(view.records);
  const promptLen = turns[0].prompt.length;
  const expectedMask: number[] = [];
  const expectedLogp: number[] = [];
  let end = promptLen;
  turns.forEach((turn, i) => {
    const obs = turn.prompt.length - end;
    if (i > 0) expect(obs).toBeGreaterThan(0);
    expectedMask.push(...new Array(obs).fill(0), ...turn.output.map(() => 1));
    expectedLogp.push(...new Array(obs).fill(0), ...turn.logprobs);
    end = turn.prompt.length + turn.output.length;
  });
  expect(sample.tokens).toEqual(view.metadata.accumulated_token_ids);
  expect(sample.response_length).toBe(sample.tokens.length - promptLen);
  expect(sample.loss_mask).toEqual(expectedMask);
  expect(sample.rollout_log_probs).toEqual(expectedLogp);
  expect(sample.response).toBe(tokenizer.decode(sample.tokens.slice(promptLen)));
  expect(sample.status).toBe("completed");
  expect(sample.weight_versions).toEqual(["w0", "w1", "w2"]);
  expect(sample.prefix_cache_info.total_prompt_tokens).toBe(turns.reduce((n, t) => n + t.prompt.length, 0));
  expect(sample.prefix_cache_info.cached_tokens).toBe(0);
  expect(sample.metadata.lifecycle).toEqual(
    view.records.map((r, i) => ({
      t0: null,
      t1: r.timestamp,
      turn: i + 1,
      req_ts: r.request_timestamp,
      ...(i > 0 ? { prev_t1: view.records[i - 1].timestamp } : {}),
    })),
  );
  sample.validate();
});

test("max_seq_len truncation keeps turn 1, cuts turn 2 to fit (truncated) and drops turn 3", async () => {
  const view = await getSession(server.url, sessionId);
  const turns = turnsOf(view.records);
  const turn2End = turns[1].prompt.length + turns[1].output.length;
  const maxSeqLen = turn2End - 3;
  const reply = await collect(sessionId, { max_seq_len: maxSeqLen });
  expect(reply.status).toBe(200);
  const sample = decoded(reply.bytes).samples[0];
  const promptLen = turns[0].prompt.length;
  expect(sample.tokens).toEqual((view.metadata.accumulated_token_ids as number[]).slice(0, maxSeqLen));
  expect(sample.status).toBe("truncated");
  expect(sample.response_length).toBe(maxSeqLen - promptLen);
  const obs = turns[1].prompt.length - (turns[0].prompt.length + turns[0].output.length);
  const kept2 = turns[1].output.length - 3;
  expect(sample.loss_mask).toEqual([...turns[0].output.map(() => 1), ...new Array(obs).fill(0), ...new Array(kept2).fill(1)]);
  expect(sample.rollout_log_probs).toEqual([...turns[0].logprobs, ...new Array(obs).fill(0), ...turns[1].logprobs.slice(0, kept2)]);
  expect(sample.weight_versions).toEqual(["w0", "w1"]);
  expect((sample.metadata.lifecycle as unknown[]).length).toBe(2);
  expect(sample.response).toBe(tokenizer.decode(sample.tokens.slice(promptLen)));
});

test("a budget that fits only the first turn exactly keeps a single-turn sample with a lifecycle object", async () => {
  const view = await getSession(server.url, sessionId);
  const turns = turnsOf(view.records);
  const reply = await collect(sessionId, { max_seq_len: turns[0].prompt.length + turns[0].output.length });
  const sample = decoded(reply.bytes).samples[0];
  expect(sample.status).toBe("completed");
  expect(sample.loss_mask).toEqual(turns[0].output.map(() => 1));
  expect(sample.metadata.lifecycle).toEqual({ t0: null, t1: view.records[0].timestamp, turn: 1, req_ts: view.records[0].request_timestamp });
});

test("no records -> empty reply with no_records; all truncated -> all_truncated", async () => {
  const empty = await createSession(server.url);
  const none = await collect(empty, { max_seq_len: null });
  expect(none.status).toBe(200);
  const a = decoded(none.bytes);
  expect(a.samples).toEqual([]);
  expect(a.empty_reason).toBe("no_records");
  expect(a.session_metadata).toEqual({ accumulated_token_ids: [], max_trim_tokens: 0 });

  const tiny = await collect(sessionId, { max_seq_len: 1 });
  const b = decoded(tiny.bytes);
  expect(b.samples).toEqual([]);
  expect(b.empty_reason).toBe("all_truncated");
});

test("an assembly failure is 422 text/plain naming the rule, and the server keeps serving", async () => {
  const before = await getSession(server.url, sessionId);
  const reply = await collect(sessionId, { max_seq_len: CORRUPT });
  expect(reply.status).toBe(422);
  expect(reply.headers["content-type"]).toMatch(/^text\/plain/);
  // Python's assertion text (miles/rollout/session/samples/merge.py, step 5 of compute_samples_from_openai_records).
  const n = before.metadata.accumulated_token_ids.length;
  expect(reply.text).toBe(`cursor ${n} != len(accumulated_token_ids) ${n + 1} after processing all 3 records`);
  expect((await call("GET", `${server.url}/health`)).status).toBe(200);
  expect(await getSession(server.url, sessionId)).toEqual(before);
  expect((await collect(sessionId, { max_seq_len: null })).status).toBe(200);
});

// mirrors miles/rollout/session/sessions.py collect_samples: the v1 route passes max_seq_len only, so a body
// `metadata` (of any type) is never read; tests/fast/router/test_session_samples_op.py covers the v1 op without it.
test("v1 ignores a body metadata of any type: same 200 payload as without it", async () => {
  const plain = await collect(sessionId, { max_seq_len: null });
  expect(plain.status).toBe(200);
  for (const metadata of [{ reward: 1, note: "x" }, "not an object", [1, 2], 7, null]) {
    const reply = await collect(sessionId, { max_seq_len: null, metadata });
    expect(reply.status).toBe(200);
    expect(Buffer.from(reply.bytes).equals(Buffer.from(plain.bytes))).toBe(true);
    expect(decoded(reply.bytes).samples[0].metadata.note).toBeUndefined();
  }
});
