// The scripted weather run of SPEC §10 driven by hand-written requests against a v2 server and weatherScript.
// Pins the exact tree, leaves, selected leaf and active-path records the parity proof expects.
import { afterAll, beforeAll, expect, test } from "@jest/globals";
import {
  ASSISTANT_INPUT_FOLLOWUP_TEXT,
  ASSISTANT_INPUT_TEXTS,
  buildInitialMessages,
  FORCE_FINAL_TEXT,
  MOCK_TOOL_RESULTS,
  SYSTEM_REMINDER_TEXT,
  USER_FOLLOWUP_TEXT,
  WEATHER_TOOLS,
} from "../../../src/agent/texts";
import { weatherScript } from "../../../src/backend";
import type { ChatMessage } from "../../../src/tokenizer/types";
import { chat, collect, createSession, getSession, sampleLeafIds, startV2Harness, type V2Harness } from "./support/harness";

let h: V2Harness;

beforeAll(async () => {
  h = await startV2Harness();
  h.useScript(weatherScript);
});

afterAll(async () => {
  await h.close();
});

test("the weather run yields the expected tree, leaves, selected leaf and active path", async () => {
  const base = h.server.url;
  const id = await createSession(base);
  const messages: ChatMessage[] = buildInitialMessages();
  const sampling = { tools: WEATHER_TOOLS, temperature: 0, seed: 20260803, max_tokens: 128 };
  let toolResults = 0;
  const call = async (): Promise<ChatMessage> => {
    const reply = await chat(base, id, messages, sampling);
    expect(reply.status).toBe(200);
    messages.push(reply.message);
    return reply.message;
  };
  const appendToolResult = (): void => {
    const last = messages.at(-1) as ChatMessage;
    const calls = last.tool_calls ?? [];
    expect(calls).toHaveLength(1);
    messages.push({ role: "tool", content: MOCK_TOOL_RESULTS[toolResults++ % MOCK_TOOL_RESULTS.length], tool_call_id: calls[0].id });
  };

  await call(); // initial: Beijing tool call
  appendToolResult();
  await call(); // Beijing summary
  messages.push({ role: "user", content: USER_FOLLOWUP_TEXT });
  await call(); // Shanghai tool call
  appendToolResult();
  await call(); // Shanghai summary
  messages.push({ role: "system", content: SYSTEM_REMINDER_TEXT });
  await call(); // one-sentence promise
  messages.pop(); // rollback
  await call();
  messages.pop(); // rollback
  await call();
  messages.push({ role: "user", content: FORCE_FINAL_TEXT });
  await call(); // forced final answer
  messages.push(
    { role: "assistant", content: ASSISTANT_INPUT_TEXTS[0] },
    { role: "assistant", content: ASSISTANT_INPUT_TEXTS[1] },
    { role: "user", content: ASSISTANT_INPUT_FOLLOWUP_TEXT },
  );
  await call(); // final answer after the injected assistant turns

  const view = await getSession(base, id);
  const tree = view.metadata.tree;
  expect(tree.nodes.map((n) => [n.id, n.parent])).toEqual([
    [0, null],
    [1, 0],
    [2, 1],
    [3, 2],
    [4, 3],
    [5, 3],
    [6, 3],
    [7, 6],
    [8, 7],
  ]);
  expect(tree.nodes.every((n) => n.seq === n.id && !n.truncated)).toBe(true);
  expect(tree.leaves).toEqual([
    { node_id: 4, path_node_ids: [0, 1, 2, 3, 4] },
    { node_id: 5, path_node_ids: [0, 1, 2, 3, 5] },
    { node_id: 8, path_node_ids: [0, 1, 2, 3, 6, 7, 8] },
  ]);
  expect(view.records).toHaveLength(7);
  expect(view.metadata.tito_session_mismatch).toEqual([]);

  const agent = {
    driver_events: ["initial", "append_tool", "append_user", "append_tool", "append_system", "rollback", "rollback", "force_final", "append_assistant"],
  };
  const reply = await collect(base, id, { max_seq_len: null, metadata: agent });
  expect(sampleLeafIds(reply)).toEqual([8]);
  const [sample] = reply.samples;
  expect(sample.tokens).toEqual(view.metadata.accumulated_token_ids);
  expect(sample.weight_versions).toEqual(["w0", "w1", "w2", "w3", "w4", "w7", "w8"]);
  expect(sample.status).toBe("completed");
  expect(sample.metadata.driver_events).toEqual(agent.driver_events);
  expect(sample.metadata.leaf).toEqual({ node_id: 8, parent: 7, path_node_ids: [0, 1, 2, 3, 6, 7, 8], response_id: tree.nodes[8].response_id });
  // A single kept leaf owns every completion on its path: the loss mask covers exactly the seven completions.
  const start = sample.tokens.length - sample.response_length;
  const trained = (sample.loss_mask ?? []).reduce((sum, bit) => sum + bit, 0);
  const completions = [0, 1, 2, 3, 6, 7, 8].reduce((sum, n) => sum + tree.nodes[n].completion_span[1] - tree.nodes[n].completion_span[0], 0);
  expect(start).toBe(tree.nodes[0].completion_span[0]);
  expect(trained).toBe(completions);
  expect(h.warnings).toEqual([]);
});
