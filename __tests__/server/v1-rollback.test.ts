// v1 trajectory semantics over HTTP (SPEC §7.1): append-only turns, retries, rollback by one turn, refusals.
// Every refusal is checked to leave the stored session exactly as it was.
import { buildInitialMessages, MOCK_TOOL_RESULTS, USER_FOLLOWUP_TEXT, WEATHER_TOOLS } from "../../src/agent/texts";
import { startMockBackend, weatherScript, type MockBackend } from "../../src/backend";
import { startSessionServer, type RunningSessionServer } from "../../src/server";
import type { ChatMessage } from "../../src/tokenizer/types";
import { assistantOf, chat, createSession, getSession, recordingLogger } from "./helpers";

/** The seed fixture's server kwargs: servers alone default to {} (miles' --apply-chat-template-kwargs). */
const SEED_KWARGS = { enable_thinking: false };

let backend: MockBackend;
let server: RunningSessionServer;

beforeAll(async () => {
  backend = await startMockBackend({ process: weatherScript });
  server = await startSessionServer({ chatTemplateKwargs: SEED_KWARGS, version: "v1", backendUrl: backend.url, logger: recordingLogger() });
});

afterAll(async () => {
  await server.close();
  await backend.close();
});

function toolResult(index: number, callId = "call00000"): ChatMessage {
  return { role: "tool", tool_call_id: callId, content: MOCK_TOOL_RESULTS[index] };
}

/** Drives `turns` append-only turns: initial, tool result, user follow-up; returns the history and replies. */
async function threeTurns(id: string, count = 3): Promise<{ history: ChatMessage[]; assistants: ChatMessage[] }> {
  const history = buildInitialMessages();
  const assistants: ChatMessage[] = [];
  const steps: ChatMessage[][] = [[], [toolResult(0)], [{ role: "user", content: USER_FOLLOWUP_TEXT }]].slice(0, count);
  for (const step of steps) {
    history.push(...step);
    const reply = await chat(server.url, id, { messages: history, tools: WEATHER_TOOLS });
    expect(reply.status).toBe(200);
    const assistant = assistantOf(reply);
    assistants.push(assistant);
    history.push(assistant);
  }
  return { history, assistants };
}

test("append-only turns extend the accumulated ids with TITO prompts built on the checkpoint", async () => {
  const id = await createSession(server.url);
  await threeTurns(id);
  const view = await getSession(server.url, id);
  expect(view.records).toHaveLength(3);
  for (let i = 1; i < 3; i += 1) {
    const previous = view.records[i - 1];
    const prevIds = [...previous.request.input_ids, ...previous.response.choices[0].meta_info.output_token_logprobs.map((p: number[]) => p[1])];
    const prompt: number[] = view.records[i].request.input_ids;
    expect(prompt.slice(0, prevIds.length)).toEqual(prevIds);
    expect(prevIds[prevIds.length - 1]).toBe(151645);
    expect(prompt[prevIds.length]).toBe(198);
  }
  const last = view.records[2];
  const lastIds = [...last.request.input_ids, ...last.response.choices[0].meta_info.output_token_logprobs.map((p: number[]) => p[1])];
  expect(view.metadata.accumulated_token_ids).toEqual(lastIds);
  expect(view.metadata.tito_session_mismatch).toEqual([]);
});

test("a pure retry (same history without the last reply) regenerates the last turn", async () => {
  const id = await createSession(server.url);
  const { history } = await threeTurns(id);
  const before = await getSession(server.url, id);
  const retry = history.slice(0, -1);
  const reply = await chat(server.url, id, { messages: retry, tools: WEATHER_TOOLS });
  expect(reply.status).toBe(200);
  const after = await getSession(server.url, id);
  expect(after.records).toHaveLength(3);
  expect(after.records.slice(0, 2)).toEqual(before.records.slice(0, 2));
  expect(after.records[2].request.input_ids).toEqual(before.records[2].request.input_ids);
  expect(after.records[2].response.id).not.toBe(before.records[2].response.id);
});

test("a divergent tool result rolls back one turn and continues from the previous checkpoint", async () => {
  const id = await createSession(server.url);
  const { history } = await threeTurns(id, 2);
  const before = await getSession(server.url, id);
  // history: sys, user, a1, tool0, a2 -> replace tool0 with another result (discards a2 only).
  const divergent = [...history.slice(0, 3), toolResult(2)];
  const reply = await chat(server.url, id, { messages: divergent, tools: WEATHER_TOOLS });
  expect(reply.status).toBe(200);
  const after = await getSession(server.url, id);
  expect(after.records).toHaveLength(2);
  expect(after.records[0]).toEqual(before.records[0]);
  const firstIds = [
    ...before.records[0].request.input_ids,
    ...before.records[0].response.choices[0].meta_info.output_token_logprobs.map((p: number[]) => p[1]),
  ];
  expect(after.records[1].request.input_ids.slice(0, firstIds.length)).toEqual(firstIds);
  expect(after.records[1].request.messages[3].content).toBe(MOCK_TOOL_RESULTS[2]);
  // ...and the next append-only turn builds on the new branch.
  const next = await chat(server.url, id, { messages: [...divergent, assistantOf(reply), { role: "user", content: "thanks" }], tools: WEATHER_TOOLS });
  expect(next.status).toBe(200);
  expect((await getSession(server.url, id)).records).toHaveLength(3);
});

test("retrying the first turn empties the session and renders from scratch", async () => {
  const id = await createSession(server.url);
  const first = buildInitialMessages();
  const r1 = await chat(server.url, id, { messages: first, tools: WEATHER_TOOLS });
  const before = await getSession(server.url, id);
  const changed = [first[0], { role: "user", content: "What's the weather in Paris?" }];
  const r2 = await chat(server.url, id, { messages: changed, tools: WEATHER_TOOLS });
  expect([r1.status, r2.status]).toEqual([200, 200]);
  const after = await getSession(server.url, id);
  expect(after.records).toHaveLength(1);
  expect(after.records[0].request.messages).toEqual(changed);
  expect(after.records[0].request.input_ids).not.toEqual(before.records[0].request.input_ids);
});

test("a jump back across two generated turns is 400 and nothing changes", async () => {
  const id = await createSession(server.url);
  const { history } = await threeTurns(id);
  const before = await getSession(server.url, id);
  backend.reset();
  const jump = [...history.slice(0, 3), toolResult(3)]; // diverges before checkpoint 2 and 3
  const early = [...history.slice(0, 2)]; // drops all three generated turns? (a1 is the first checkpoint)
  for (const messages of [jump.slice(0, 2).concat([{ role: "user", content: "different" }]), early.concat([{ role: "user", content: "x" }])]) {
    const reply = await chat(server.url, id, { messages, tools: WEATHER_TOOLS });
    expect(reply.status).toBe(400);
    expect(reply.json<{ error: string }>().error).toMatch(
      /^rollback failed: discard_count=3 exceeds max_assistant_rollback_steps=1 \(stored has \d+ messages, request has 3 messages\)$/,
    );
  }
  const twoBack = [...history.slice(0, 5), { role: "user", content: "a different follow-up" }];
  const reply = await chat(server.url, id, { messages: twoBack, tools: WEATHER_TOOLS });
  expect(reply.status).toBe(200); // diverges after checkpoint 2: discards only turn 3
  const again = await getSession(server.url, id);
  expect(again.records.slice(0, 2)).toEqual(before.records.slice(0, 2));
  const twoTurnJump = [...history.slice(0, 3), toolResult(1)];
  const refused = await chat(server.url, id, { messages: twoTurnJump, tools: WEATHER_TOOLS });
  expect(refused.status).toBe(400);
  expect(refused.json<{ error: string }>().error).toBe(
    "rollback failed: discard_count=2 exceeds max_assistant_rollback_steps=1 (stored has 7 messages, request has 4 messages)",
  );
  expect(await getSession(server.url, id)).toEqual(again);
  expect(backend.requestLog).toHaveLength(1);
});

// mirrors tests/fast/router/test_sessions_v1_pins.py::test_disallowed_append_role_400_with_rollback_side_effect
test("a disallowed appended role is 400; without a rollback nothing changes, after a rollback the rollback stays", async () => {
  const id = await createSession(server.url);
  const history = buildInitialMessages();
  const r1 = await chat(server.url, id, { messages: history, tools: WEATHER_TOOLS });
  const before = await getSession(server.url, id);
  const reply = await chat(server.url, id, { messages: [...history, assistantOf(r1), { role: "developer", content: "x" }], tools: WEATHER_TOOLS });
  expect(reply.status).toBe(400);
  expect(reply.json<{ error: string }>().error).toBe(
    "appended message at index 3 has role='developer', allowed=frozenset({'tool', 'user', 'system', 'assistant'}); " +
      "the selected TITO fixed template does not support appending this role",
  );
  expect(await getSession(server.url, id)).toEqual(before);
  // A retry of the first turn that carries a disallowed role: rolled back to empty, then rendered from scratch.
  const rolled = await chat(server.url, id, { messages: [history[0], { role: "developer", content: "y" }], tools: WEATHER_TOOLS });
  expect(rolled.status).toBe(200); // no checkpoint left: rendered from scratch, roles are the template's business
  const id2 = await createSession(server.url);
  const { history: h2 } = await threeTurns(id2);
  const before2 = await getSession(server.url, id2);
  const bad = await chat(server.url, id2, { messages: [...h2.slice(0, 5), { role: "developer", content: "z" }], tools: WEATHER_TOOLS });
  expect(bad.status).toBe(400);
  // The one-turn rollback was applied before the role check refused the request, and it stays applied (as in
  // Python): two records and the second checkpoint are what the session now holds.
  const after2 = await getSession(server.url, id2);
  expect(before2.records).toHaveLength(3);
  expect(after2.records).toEqual(before2.records.slice(0, 2));
  const checkpoint2 = [
    ...after2.records[1].request.input_ids,
    ...after2.records[1].response.choices[0].meta_info.output_token_logprobs.map((p: number[]) => p[1]),
  ];
  expect(after2.metadata.accumulated_token_ids).toEqual(checkpoint2);
});

test("a streaming client's rebuilt messages pass the strict prefix check on the next turn", async () => {
  const id = await createSession(server.url);
  const history = buildInitialMessages();
  const streamed = await chat(server.url, id, { messages: history, tools: WEATHER_TOOLS, stream: true });
  const chunk = JSON.parse(streamed.text.split("\n\n")[0].slice(6));
  const delta = chunk.choices[0].delta;
  // What an SSE client rebuilds: role, content, tool calls without their index.
  const rebuilt: ChatMessage = {
    role: delta.role,
    content: delta.content,
    tool_calls: delta.tool_calls.map(({ index: _index, ...call }: Record<string, unknown>) => call),
  };
  const before = await getSession(server.url, id);
  const next = await chat(server.url, id, { messages: [...history, rebuilt, toolResult(0, rebuilt.tool_calls![0].id)], tools: WEATHER_TOOLS, stream: true });
  expect(next.status).toBe(200);
  const after = await getSession(server.url, id);
  expect(after.records).toHaveLength(2);
  expect(after.records[0]).toEqual(before.records[0]);
  const firstIds = before.metadata.accumulated_token_ids as number[];
  expect(after.records[1].request.input_ids.slice(0, firstIds.length)).toEqual(firstIds);
  expect(after.metadata.tito_session_mismatch).toEqual([]);
});

test("a custom matcher that breaks its contract is a 500 and the session is unchanged", async () => {
  let broken = false;
  const picky = await startSessionServer({
    chatTemplateKwargs: SEED_KWARGS,
    version: "v1",
    backendUrl: backend.url,
    logger: recordingLogger(),
    messageMatcher: (a, b) => (broken ? ("maybe" as unknown as boolean) : a.role === b.role && a.content === b.content),
  });
  try {
    const id = await createSession(picky.url);
    const history = buildInitialMessages();
    const r1 = await chat(picky.url, id, { messages: history, tools: WEATHER_TOOLS });
    expect(r1.status).toBe(200);
    const before = await getSession(picky.url, id);
    broken = true;
    const reply = await chat(picky.url, id, { messages: [...history, assistantOf(r1), toolResult(0)], tools: WEATHER_TOOLS });
    expect(reply.status).toBe(500);
    expect(reply.json<{ error: string }>().error).toBe("session message matcher must return bool, got str");
    expect(await getSession(picky.url, id)).toEqual(before);
  } finally {
    await picky.close();
  }
});

test("client-carried assistants are prompt history, not checkpoints: a few-shot session rolls back to its generated turn", async () => {
  const fewShot: ChatMessage[] = [
    { role: "user", content: "Q-few-shot" },
    { role: "assistant", content: "A-few-shot" },
    { role: "user", content: "What's the weather in Beijing?" },
  ];
  const id = await createSession(server.url);
  const r1 = await chat(server.url, id, { messages: fewShot, tools: WEATHER_TOOLS });
  const a1 = assistantOf(r1);
  const r2 = await chat(server.url, id, { messages: [...fewShot, a1, toolResult(0)], tools: WEATHER_TOOLS });
  expect([r1.status, r2.status]).toEqual([200, 200]);
  const before = await getSession(server.url, id);
  const retry = await chat(server.url, id, { messages: [...fewShot, a1, toolResult(2)], tools: WEATHER_TOOLS });
  expect(retry.status).toBe(200);
  const after = await getSession(server.url, id);
  expect(after.records).toHaveLength(2);
  expect(after.records[0]).toEqual(before.records[0]);
  expect(after.records[1].request.messages.at(-1).content).toBe(MOCK_TOOL_RESULTS[2]);
  // Diverging inside the few-shot prefix would discard both generated turns: refused, nothing changes.
  const inside = await chat(server.url, id, { messages: [fewShot[0], { role: "assistant", content: "other" }, fewShot[2]], tools: WEATHER_TOOLS });
  expect(inside.status).toBe(400);
  expect(inside.json<{ error: string }>().error).toBe(
    "rollback failed: discard_count=2 exceeds max_assistant_rollback_steps=1 (stored has 6 messages, request has 3 messages)",
  );
  expect(await getSession(server.url, id)).toEqual(after);
});
