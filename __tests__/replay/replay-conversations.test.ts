// The fixture function from a Jest test: the shipped corpus pinned through v1 and v2 and compared with the parity
// matcher; with retries, a v2 picker keeping superseded retry leaves fails it; a bad corpus is one clear error.
import { describe, expect, test } from "@jest/globals";
import * as path from "node:path";
import { REPLAY_PARITY_OPTIONS, replayConversations } from "../../src";
import { ReplayCorpusError } from "../../src/replay/replay-conversations";
import { drawRetries } from "../../src/replay/retry-injection";
import { keepSupersededLeaves } from "../fuzz/planted-bugs";

const ROOT = path.resolve(__dirname, "../..");
const CORPUS = [path.join(ROOT, "examples/replay/conversations.jsonl"), path.join(ROOT, "examples/replay/trajectory-dump.jsonl")];

describe("replayConversations", () => {
  test("the shipped corpus (both formats) has v1/v2 training-payload parity, conversation by conversation", async () => {
    const [v1, v2] = await Promise.all([replayConversations({ file: CORPUS, version: "v1" }), replayConversations({ file: CORPUS, version: "v2" })]);
    expect(v1.map((run) => run.conversation)).toEqual([...Array(11).keys()]);
    expect(v1.map((run) => run.source.line)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 1, 2, 3]);
    for (const [i, run] of v1.entries()) {
      expect(run.failure).toBeUndefined();
      expect(run).toHaveTrainingPayloadParity(v2[i], REPLAY_PARITY_OPTIONS);
    }
    // the parallel-call conversation: the three recorded calls came back parsed from the mock's qwen25 text
    const parallel = v2[2].preCollect.records[0].response as { choices: Array<{ message: { tool_calls: Array<{ function: { arguments: string } }> } }> };
    expect(parallel.choices[0].message.tool_calls.map((call) => call.function.arguments)).toEqual([
      '{"location": "Lima"}',
      '{"location": "Cairo"}',
      '{"location": "Reykjavík"}',
    ]);
  });

  test("with retries, a v2 that keeps superseded retry leaves fails the matcher on the conversations that got a dropped retry", async () => {
    const retries = { seed: 7, rate: 1 };
    const conversations = [CORPUS[0]];
    const [v1, v2] = await Promise.all([
      replayConversations({ file: conversations, version: "v1", retries }),
      replayConversations({ file: conversations, version: "v2", retries, server: { samplePicker: keepSupersededLeaves } }),
    ]);
    expect(v1.map((run) => run.retries)).toEqual(v2.map((run) => run.retries));
    // a reply dropped after the first one leaves a superseded leaf (one dropped at the first reply is a root leaf,
    // kept by miles' picker too and set aside by the replay)
    const firstTurn = (i: number): number => v1[i].retries[0]?.turn ?? -1;
    const dropping = v1.flatMap((run, i) =>
      run.retries.some((retry) => !retry.kind.endsWith("append_tool") && !retry.kind.endsWith("append_user") && retry.turn > firstTurn(i)) ? [i] : [],
    );
    expect(dropping.length).toBeGreaterThan(0);
    for (const i of dropping) {
      expect(() => expect(v1[i]).toHaveTrainingPayloadParity(v2[i], REPLAY_PARITY_OPTIONS)).toThrow(/the v2 run returned \d+ samples, expected 1/);
    }
  });

  // miles/rollout/session/v2/picker_hub/drop_retries.py: "No later sibling -> keep (root leaves included)"
  test("a reply dropped at the first recorded reply is a v2 root leaf: set aside, so parity holds on the rest", async () => {
    const conversation = {
      messages: [
        { role: "system", content: "Answer briefly." },
        { role: "user", content: "Capital of Peru?" },
        { role: "assistant", content: "Lima." },
        { role: "user", content: "And of Chile?" },
        { role: "assistant", content: "Santiago." },
      ],
    };
    const seed = [...Array(100).keys()].find((s) => {
      const index = { file: "x", line: 1, index: 0, format: "openai" as const, tools: [], promptLength: 0, label: null };
      const drawn = drawRetries({ ...index, messages: conversation.messages }, [2, 4], { seed: s, rate: 1 });
      return drawn[0]?.kind === "pure_retry" && drawn[1]?.kind === "divergent_retry";
    });
    expect(seed).toBeDefined();
    const retries = { seed: seed!, rate: 1 };
    const [v1, v2] = await Promise.all([
      replayConversations({ conversations: [conversation], version: "v1", retries }),
      replayConversations({ conversations: [conversation], version: "v2", retries }),
    ]);
    expect(v1[0].setAside).toEqual([]);
    expect(v2[0].setAside.map((sample) => sample.weight_versions)).toEqual([["w0"]]);
    expect(v1[0]).toHaveTrainingPayloadParity(v2[0], REPLAY_PARITY_OPTIONS);
  });

  test("inline conversations; a malformed one and an unrenderable one are named together, nothing is replayed", async () => {
    const good = {
      messages: [
        { role: "user", content: "Hi" },
        { role: "assistant", content: "Hello." },
      ],
    };
    const runs = await replayConversations({ conversations: [good], version: "v2" });
    expect(runs).toHaveLength(1);
    expect(runs[0].samples).toHaveLength(1);
    const bad = replayConversations({ conversations: [good, "{oops", { messages: [{ role: "user", content: "Hi" }] }], version: "v1" });
    await expect(bad).rejects.toThrow(ReplayCorpusError);
    await expect(bad).rejects.toThrow(/inline:2: not valid JSON[\s\S]*inline:3: conversation 2, message 0: the conversation ends in a user message/);
  });
});

describe("replayConversations' template source", () => {
  // miles/utils/arguments.py installs the family's fixed template; tests/session_parity_utils.py::_serve_session runs
  // the checkpoint's own: the two render an earlier reply's reasoning differently, so the source must reach the servers
  const thinking = {
    messages: [
      { role: "user", content: "Is 7 prime?" },
      { role: "assistant", reasoning_content: "7 has no divisor but 1 and 7.", content: "Yes." },
      { role: "user", content: "And 9?" },
      { role: "assistant", reasoning_content: "9 = 3 * 3.", content: "No." },
    ],
  };

  test("chatTemplate reaches the embedded mock and server: the same source agrees, family against checkpoint does not", async () => {
    const [family, checkpoint, checkpointV2] = await Promise.all([
      replayConversations({ conversations: [thinking], version: "v1" }),
      replayConversations({ conversations: [thinking], version: "v1", chatTemplate: "checkpoint" }),
      replayConversations({ conversations: [thinking], version: "v2", chatTemplate: "checkpoint" }),
    ]);
    expect(checkpoint[0].failure).toBeUndefined();
    expect(checkpoint[0]).toHaveTrainingPayloadParity(checkpointV2[0], REPLAY_PARITY_OPTIONS);
    expect(() => expect(family[0]).toHaveTrainingPayloadParity(checkpoint[0], REPLAY_PARITY_OPTIONS)).toThrow();
  });
});
