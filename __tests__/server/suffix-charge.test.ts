// The session budget charges a turn for what it adds: the messages and ids it appends, never the history it repeats
// (shared with the stored record it builds on), so a long session's charge per turn does not grow with its length;
// and a turn past the budget is still refused with a clear error that loses nothing stored.
import fc from "fast-check";
import { echoScript, startMockBackend, type MockBackend } from "../../src/backend";
import { suffixRecordBytes } from "../../src/server/record-charge";
import { retainedBytes } from "../../src/server/retained-size";
import { startSessionServer } from "../../src/server/session-server";
import { shareStoredHistory } from "../../src/server/shared-history";
import type { CompletedTurn, SessionRecord } from "../../src/server/types";
import type { ChatMessage } from "../../src/tokenizer/types";
import { dumpsPy, PY_DEFAULT_JSON, PY_RESPONSE_JSON } from "../../src/wire/py-json";
import { call, chat, createSession } from "./helpers";

const recordOf = (request: Record<string, unknown>, content: string): SessionRecord => ({
  timestamp: 1_796_000_000.123,
  request_timestamp: 1_796_000_000.1,
  method: "POST",
  path: "/v1/chat/completions",
  request,
  response: JSON.parse(JSON.stringify({ id: "r", choices: [{ index: 0, message: { role: "assistant", content }, finish_reason: "stop" }] })) as Record<
    string,
    unknown
  >,
  status_code: 200,
});

const turnOf = (record: SessionRecord, ids: number[]): CompletedTurn => ({
  promptIds: ids,
  completionIds: [9707, 151645],
  assistantMessage: (record.response.choices as Array<{ message: ChatMessage }>)[0].message,
  finishReason: "stop",
  responseId: "r",
  record,
});

const messageArb = fc.record({ role: fc.constantFrom("user", "assistant", "tool"), content: fc.string({ unit: "grapheme", maxLength: 60 }) });
const copy = <T>(value: T): T => JSON.parse(JSON.stringify(value)) as T;

describe("suffixRecordBytes", () => {
  test("equals the heap bytes the record adds: its walk with the stored record's shared objects counted as seen", () => {
    fc.assert(
      fc.property(
        fc.array(messageArb, { minLength: 1, maxLength: 8 }),
        fc.array(messageArb, { maxLength: 4 }),
        fc.option(fc.array(fc.record({ type: fc.constant("function"), name: fc.string() }), { maxLength: 2 }), { nil: undefined }),
        fc.array(fc.integer({ min: 0, max: 151_935 }), { maxLength: 400 }),
        fc.nat(8),
        (history, appended, tools, ids, edited) => {
          const base = recordOf(
            { model: "m", messages: copy(history), ...(tools === undefined ? {} : { tools: copy(tools) }), input_ids: ids.slice(0, 5) },
            "a",
          );
          // the client re-sends the history (parsed anew), perhaps with one message changed, and appends its turn
          const resent = copy(history);
          if (edited < resent.length) resent[edited] = { ...resent[edited], content: `${resent[edited].content}!` };
          const body: Record<string, unknown> = {
            model: "m",
            messages: [...resent, ...copy(appended)],
            ...(tools === undefined ? {} : { tools: copy(tools) }),
          };
          body.input_ids = ids.slice();
          const spelled = [dumpsPy(body, PY_DEFAULT_JSON), dumpsPy(body, PY_RESPONSE_JSON)];
          const shared = shareStoredHistory(body, base);
          expect([dumpsPy(body, PY_DEFAULT_JSON), dumpsPy(body, PY_RESPONSE_JSON)]).toEqual(spelled); // the same bytes either way
          expect(shared.messages).toBe(edited < history.length ? edited : history.length);
          const messages = body.messages as unknown[];
          for (let i = 0; i < shared.messages; i += 1) expect(messages[i]).toBe((base.request.messages as unknown[])[i]);
          const turn = turnOf(recordOf(body, "b"), ids);
          const seen = new Set<object>([
            ...(base.request.messages as object[]).slice(0, shared.messages),
            ...(shared.tools ? [base.request.tools as object] : []),
          ]);
          expect(suffixRecordBytes(turn, shared)).toBe(retainedBytes([turn.record, turn.assistantMessage], seen));
        },
      ),
      { numRuns: 300 },
    );
  });
});

describe("over HTTP", () => {
  let backend: MockBackend;
  beforeAll(async () => {
    backend = await startMockBackend({ process: echoScript });
  });
  afterAll(async () => {
    await backend.close();
  });

  const line = (turn: number): string => `turn ${turn}: ${"the agent reads a file and reports what it found. ".repeat(40)}`;

  test.each(["v1", "v2"] as const)("%s: the charge of turn k is what turn k adds, the same at turn 5 and turn 40", async (version) => {
    const server = await startSessionServer({ version, backendUrl: backend.url, logger: { warn: () => undefined } });
    try {
      const id = await createSession(server.url);
      const messages: Array<Record<string, unknown>> = [];
      const added: number[] = [];
      for (let turn = 1; turn <= 40; turn += 1) {
        messages.push({ role: "user", content: line(turn) });
        const before = server.sessionUsage().bytes;
        const reply = await chat(server.url, id, { messages });
        expect(reply.status).toBe(200);
        added.push(server.sessionUsage().bytes - before);
        messages.push(reply.json<{ choices: Array<{ message: Record<string, unknown> }> }>().choices[0].message);
      }
      // the history at turn 40 is eight times that at turn 5; what the turn is charged is not
      expect(added[39]).toBeLessThan(1.5 * added[4]);
      expect(added[39]).toBeGreaterThan(0.5 * added[4]);
    } finally {
      await server.close();
    }
  });

  test.each(["v1", "v2"] as const)(
    "%s: a turn past the budget is refused naming it, and the session's view and samples stay byte for byte",
    async (version) => {
      const server = await startSessionServer({ version, backendUrl: backend.url, logger: { warn: () => undefined }, maxSessionBytes: 1_500_000 });
      try {
        const id = await createSession(server.url);
        const messages: Array<Record<string, unknown>> = [];
        let refused: Awaited<ReturnType<typeof chat>> | null = null;
        let before: Buffer[] = [];
        for (let turn = 1; turn <= 200 && refused === null; turn += 1) {
          before = [
            Buffer.from((await call("GET", `${server.url}/sessions/${id}`)).bytes),
            Buffer.from((await call("POST", `${server.url}/sessions/${id}/samples`, { max_seq_len: null })).bytes),
          ];
          messages.push({ role: "user", content: line(turn).repeat(3) });
          const reply = await chat(server.url, id, { messages });
          if (reply.status !== 200) refused = reply;
          else messages.push(reply.json<{ choices: Array<{ message: Record<string, unknown> }> }>().choices[0].message);
        }
        expect(refused).not.toBeNull();
        expect(refused!.status).toBe(503);
        expect(refused!.json<{ error: string }>().error).toMatch(
          /^session store is full: this chat turn needs about \d+\.\d MiB, and sessions hold \d+\.\d MiB of the 1\.4 MiB session budget \(maxSessionBytes/,
        );
        const after = [
          Buffer.from((await call("GET", `${server.url}/sessions/${id}`)).bytes),
          Buffer.from((await call("POST", `${server.url}/sessions/${id}/samples`, { max_seq_len: null })).bytes),
        ];
        expect(after[0].equals(before[0])).toBe(true);
        expect(after[1].equals(before[1])).toBe(true);
      } finally {
        await server.close();
      }
    },
  );
});
