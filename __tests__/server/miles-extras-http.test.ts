// The three session-server features miles has beyond the defaults, over loopback HTTP: the debug conversation on the
// last turn plus the trajectory dump file, `lora_path` upstream under LoRA, and speculative counters in spec_info.
import { mkdtempSync, readFileSync, rmSync, existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { buildInitialMessages, MOCK_TOOL_RESULTS, USER_FOLLOWUP_TEXT, WEATHER_TOOLS } from "../../src/agent/texts";
import { speculativeCounters } from "../../src/backend/replies";
import { startMockBackend, weatherScript, type MockBackend } from "../../src/backend";
import { startSessionServer, type AnyTrajectoryPolicy, type RunningSessionServer, type SessionServerOptions } from "../../src/server";
import { createPolicy } from "../../src/server/policy-factory";
import { trajectoryRows, trajectoryRowsText, TrajectoryDumpWriter } from "../../src/server/trajectory-dump";
import type { ChatMessage } from "../../src/tokenizer/types";
import { Sample } from "../../src/wire/sample";
import { decodeSamplesReply, WIRE_FIELDS_V1, WIRE_FIELDS_V2 } from "../../src/wire/samples-codec";
import { readCorpus } from "../../src/replay/corpus-files";
import { assistantOf, call, chat, createSession, getSession, recordingLogger } from "./helpers";

const DRAFT = 3;
let backend: MockBackend;
const servers: RunningSessionServer[] = [];
let dir: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "miles-extras-"));
  backend = await startMockBackend({ process: weatherScript, speculativeDraftTokens: DRAFT });
});

afterAll(async () => {
  await Promise.all(servers.map((s) => s.close()));
  await backend.close();
  rmSync(dir, { recursive: true, force: true });
});

async function server(options: Partial<SessionServerOptions>): Promise<RunningSessionServer> {
  const started = await startSessionServer({ version: "v1", backendUrl: backend.url, logger: recordingLogger(), ...options });
  servers.push(started);
  return started;
}

/** The weather agent's three turns; returns the session id and the client's final history. */
async function weatherSession(url: string): Promise<{ id: string; history: ChatMessage[] }> {
  const id = await createSession(url);
  const history: ChatMessage[] = buildInitialMessages();
  const steps: ChatMessage[][] = [
    [],
    [{ role: "tool", tool_call_id: "call00000", content: MOCK_TOOL_RESULTS[0] }],
    [{ role: "user", content: USER_FOLLOWUP_TEXT }],
  ];
  for (const step of steps) {
    history.push(...step);
    const reply = await chat(url, id, { messages: history, tools: WEATHER_TOOLS });
    if (reply.status !== 200) throw new Error(reply.text);
    history.push(assistantOf(reply));
  }
  return { id, history };
}

async function samplesOf(url: string, id: string, version: "v1" | "v2", body: Record<string, unknown> = { max_seq_len: null }): Promise<Sample[]> {
  const res = await call("POST", `${url}/sessions/${id}/samples`, body);
  if (res.status !== 200) throw new Error(`${res.status} ${res.text}`);
  return decodeSamplesReply(res.bytes, new Sample(), { fields: version === "v1" ? WIRE_FIELDS_V1 : WIRE_FIELDS_V2 }).samples;
}

describe.each(["v1", "v2"] as const)("%s", (version) => {
  // mirrors miles/rollout/session/samples/merge.py:87-88 (31f1ca96): the last turn's request messages + response message
  test("save_debug_trajectory_data: metadata.messages is the last record's request messages plus its reply", async () => {
    const s = await server({ version, saveDebugTrajectoryData: true });
    const { id } = await weatherSession(s.url);
    const [sample] = await samplesOf(s.url, id, version);
    const records = (await getSession(s.url, id)).records;
    const last = records[records.length - 1];
    expect(sample.metadata.messages).toEqual([...(last.request.messages as unknown[]), (last.response.choices as { message: unknown }[])[0].message]);
    // the merge keeps lifecycle first, then messages (merge_samples' _merge_metadata order)
    expect(Object.keys(sample.metadata).slice(0, 2)).toEqual(["lifecycle", "messages"]);
  });

  // mirrors merge.py:87 (`is_last`): a cut that drops the last turn drops the messages with it
  test("a max_seq_len cut before the last turn leaves no messages", async () => {
    const s = await server({ version, saveDebugTrajectoryData: true });
    const { id } = await weatherSession(s.url);
    const records = (await getSession(s.url, id)).records;
    const firstLength = (records[0].request.input_ids as number[]).length + 2;
    const [sample] = await samplesOf(s.url, id, version, { max_seq_len: firstLength });
    expect(sample.metadata.messages).toBeUndefined();
  });

  test("without the option no messages are attached and spec_info stays zeros", async () => {
    const s = await server({ version });
    const { id } = await weatherSession(s.url);
    const [sample] = await samplesOf(s.url, id, version);
    expect(sample.metadata.messages).toBeUndefined();
    expect(sample.spec_info.toDict()).toEqual({ spec_accept_token_num: 0, spec_draft_token_num: 0, spec_verify_ct: 0, completion_token_num: 0 });
  });

  // mirrors merge.py:136-137 and SpecInfo.add (miles/utils/types.py): counters summed over the merged turns,
  // completion_token_num from meta_info.completion_tokens. miles' samples codec (codec.py at 31f1ca96) carries no
  // spec_info, so the sum is read where the policy hands its samples over (what a v2 hook sees), and the wire is unchanged.
  test("sglang_speculative_algorithm: the backend's spec counters are summed into spec_info", async () => {
    const seen: Sample[][] = [];
    const inner = createPolicy(version, { logger: recordingLogger() });
    const policy: AnyTrajectoryPolicy = {
      ...inner,
      collectSamples(state, body, ctx) {
        const result = inner.collectSamples(state, body, ctx);
        seen.push(result.samples);
        return result;
      },
    };
    const s = await server({ version, sglangSpeculativeAlgorithm: "EAGLE", policy });
    const { id } = await weatherSession(s.url);
    const [wired] = await samplesOf(s.url, id, version);
    expect(wired.spec_info.spec_verify_ct).toBe(0); // not on miles' wire
    const [sample] = seen[0];
    const records = (await getSession(s.url, id)).records;
    const want = { spec_accept_token_num: 0, spec_draft_token_num: 0, spec_verify_ct: 0, completion_token_num: 0 };
    for (const record of records) {
      const meta = (record.response.choices as { meta_info: Record<string, number> }[])[0].meta_info;
      const counters = speculativeCounters(meta.completion_tokens, DRAFT);
      expect(meta).toMatchObject(counters);
      want.spec_accept_token_num += counters.spec_accept_token_num;
      want.spec_draft_token_num += counters.spec_draft_token_num;
      want.spec_verify_ct += counters.spec_verify_ct;
      want.completion_token_num += meta.completion_tokens;
    }
    expect(want.spec_verify_ct).toBeGreaterThan(0);
    expect(sample.spec_info.toDict()).toEqual(want);
  });

  // mirrors miles/rollout/session/core.py:189-191 (31f1ca96) with miles/utils/lora.py::is_lora_enabled
  test.each([[{ loraRank: 16 }], [{ loraAdapterPath: "adapters/a" }]])("LoRA %j: every upstream body names lora_path miles_lora", async (lora) => {
    const s = await server({ version, ...lora });
    const before = backend.requestLog.length;
    await weatherSession(s.url);
    const bodies = backend.requestLog.slice(before);
    expect(bodies).toHaveLength(3);
    for (const body of bodies) expect(body.lora_path).toBe("miles_lora");
    // after no_stop_trim, as the original assigns it
    const keys = Object.keys(bodies[0]);
    expect(keys.indexOf("lora_path")).toBe(keys.indexOf("no_stop_trim") + 1);
  });

  test("LoRA off (rank 0): no lora_path", async () => {
    const s = await server({ version, loraRank: 0 });
    const before = backend.requestLog.length;
    await weatherSession(s.url);
    for (const body of backend.requestLog.slice(before)) expect(body).not.toHaveProperty("lora_path");
  });

  // mirrors miles/ray/rollout/debug_data.py::trajectory_rows and save_debug_trajectory_data (one JSON line a row)
  test("--save-trajectories writes miles' dump rows, one file per session, rewritten by each samples op", async () => {
    const template = join(dir, version, "traj-{rollout_id}.jsonl");
    const s = await server({ version, saveTrajectories: template });
    const { id, history } = await weatherSession(s.url);
    const path = template.replace("{rollout_id}", id);
    expect(existsSync(path)).toBe(false); // nothing before a samples op
    await samplesOf(s.url, id, version);
    await samplesOf(s.url, id, version);
    const lines = readFileSync(path, "utf8").split("\n");
    expect(lines.pop()).toBe("");
    expect(lines).toHaveLength(1);
    const row = JSON.parse(lines[0]) as Record<string, unknown>;
    expect(Object.keys(row)).toEqual(["sample_index", "group_index", "status", "reward", "prompt", "messages"]);
    expect(row).toMatchObject({ sample_index: null, group_index: null, status: "completed", reward: null, prompt: "" });
    const messages = row.messages as ChatMessage[];
    expect(messages.map((m) => m.role)).toEqual(history.map((m) => m.role));
    expect(messages[messages.length - 1].content).toBe(history[history.length - 1].content);
    // Python's json.dumps(separators=(",", ":")): compact and ASCII-only
    expect(lines[0]).not.toMatch(/[^\x20-\x7e]/);
    expect(lines[0]).not.toContain('", "');
    // the file is what `session-parity replay` reads: one conversation, the whole history with the final reply
    const entries = [];
    for await (const entry of readCorpus([path])) entries.push(entry);
    expect(entries.map((entry) => entry.kind)).toEqual(["conversation"]);
    const conversation = (entries[0] as { conversation: { format: string; messages: ChatMessage[] } }).conversation;
    expect(conversation.messages).toEqual(messages);
  });
});

describe("trajectory rows (pure)", () => {
  // mirrors miles/ray/rollout/debug_data.py::trajectory_rows: skip samples without messages; reward kept for int/float/bool
  test("rows skip samples without messages and keep only numeric rewards", () => {
    const a = new Sample({ index: 3, group_index: 1, reward: 0.5, status: "truncated", metadata: { messages: [{ role: "user", content: "h\u00e9" }] } });
    const b = new Sample({ index: 4, reward: { score: 1 }, metadata: { messages: [] } });
    const c = new Sample({ index: 5, metadata: {} });
    const d = new Sample({ index: 6, reward: true, metadata: { messages: [] } });
    const rows = trajectoryRows([a, b, c, d]);
    expect(rows.map((r) => [r.sample_index, r.reward])).toEqual([
      [3, 0.5],
      [4, null],
      [6, true],
    ]);
    expect(trajectoryRowsText(rows.slice(0, 1))).toBe(
      '{"sample_index":3,"group_index":1,"status":"truncated","reward":0.5,"prompt":"","messages":[{"role":"user","content":"h\\u00e9"}]}\n',
    );
  });

  test("an unknown placeholder is refused at start, naming it", () => {
    expect(() => new TrajectoryDumpWriter("out/{rollout}.jsonl")).toThrow(/unknown placeholder \{rollout\}/);
  });

  test("a template without a placeholder appends every samples op's rows to one file", () => {
    const path = join(dir, "all.jsonl");
    const writer = new TrajectoryDumpWriter(path);
    const sample = new Sample({ metadata: { messages: [] } });
    writer.write("a", [sample]);
    writer.write("b", [sample, new Sample()]);
    expect(writer.write("c", [new Sample()])).toBeNull();
    expect(readFileSync(path, "utf8").trim().split("\n")).toHaveLength(2);
  });
});
