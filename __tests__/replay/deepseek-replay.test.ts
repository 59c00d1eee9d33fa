// Replays under a DeepSeek family (V3.2 on the real DeepSeek V3 vocabulary) in thinking mode and in chat mode: the
// recorded reasoning comes back as reasoning and the content as content, and the unseen corpus replays PASS.
import { describe, expect, test } from "@jest/globals";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import * as path from "node:path";
import { REPLAY_PARITY_OPTIONS, replayConversations } from "../../src";
import type { ReplayReport } from "../../src/cli/replay-report";
import { runCli } from "../cli/run-cli";
import { deepseekCheckpoint } from "../tokenizer/deepseek/checkpoint";
import { writeUnseenCorpus } from "./support/unseen-corpus";

jest.setTimeout(300_000);

const checkpoint = deepseekCheckpoint("deepseek_v32");
const dir = mkdtempSync(path.join(tmpdir(), "session-parity-deepseek-replay-"));

interface RecordedResponse {
  choices: Array<{ message: { content: string | null; reasoning_content?: string | null; tool_calls?: unknown[] } }>;
}

describe("replay under deepseekv32", () => {
  const conversation = {
    tools: [
      {
        type: "function",
        function: { name: "lookup", description: "Look a word up.", parameters: { type: "object", properties: { word: { type: "string" } } } },
      },
    ],
    messages: [
      { role: "user", content: "What does ‘saudade’ mean?" },
      {
        role: "assistant",
        reasoning_content: "A Portuguese word; look it up.",
        content: "",
        tool_calls: [{ id: "a", type: "function", function: { name: "lookup", arguments: '{"word": "saudade"}' } }],
      },
      { role: "tool", tool_call_id: "a", content: "a longing for something absent" },
      { role: "assistant", content: "A longing for something absent." },
      { role: "user", content: "Thanks!" },
      { role: "assistant", reasoning_content: "Just acknowledge.", content: "You're welcome." },
    ],
  };

  // sglang's deepseek-v3 reasoning detector with the thinking kwarg forced: the text up to </think> is reasoning
  test.each([
    ["thinking mode (the encoder's default: every prompt ends in <think>)", {}],
    ["chat mode", { thinking: false }],
  ])("%s: every reply comes back with the recorded reasoning and content; v1 and v2 agree", async (_mode, kwargs) => {
    const options = { conversations: [conversation], titoModel: "deepseekv32", hfCheckpoint: checkpoint, chatTemplateKwargs: kwargs };
    const [v1, v2] = await Promise.all([replayConversations({ ...options, version: "v1" }), replayConversations({ ...options, version: "v2" })]);
    expect(v1[0].failure).toBeUndefined();
    expect(v1[0]).toHaveTrainingPayloadParity(v2[0], REPLAY_PARITY_OPTIONS);
    const replies = v2[0].preCollect.records.map((record) => (record.response as unknown as RecordedResponse).choices[0].message);
    // chat mode: the <think> block the model wrote is still found in its text (the detector is not forced)
    const thinking = !("thinking" in kwargs);
    expect(replies.map((message) => [message.reasoning_content ?? null, message.content, message.tool_calls?.length ?? 0])).toEqual([
      ["A Portuguese word; look it up.", expect.anything(), 1],
      [thinking ? "" : null, "A longing for something absent.", 0],
      ["Just acknowledge.", "You're welcome.", 0],
    ]);
  });

  test("the unseen corpus replays PASS in thinking mode, with a retry before every reply", async () => {
    const files = writeUnseenCorpus(dir, 32, 12);
    const json = path.join(dir, "deepseek.json");
    const flags = ["--tito-model", "deepseekv32", "--hf-checkpoint", checkpoint, "--chat-template-kwargs", "{}"];
    const result = await runCli(["replay", ...files, ...flags, "--retries", "5", "--retry-rate", "1", "--json", json], { timeoutMs: 280_000 });
    const rows = (JSON.parse(readFileSync(json, "utf8")) as ReplayReport).rows;
    expect(rows.filter((row) => row.verdict.status !== "PASS").map((row) => `${row.index}: ${row.verdict.kind} ${row.verdict.cause}`)).toEqual([]);
    expect(result.stdout).toMatch(/PASS: 12\/12 conversations/);
    expect(result.code).toBe(0);
  });
});
