// v1 positions a request comparing each stored message with the request once: the append-only check and the rollback
// warning reuse the rollback search's matched prefix. This pins it to the path that compared again from index 0.
import { describe, expect, test } from "@jest/globals";
import fc from "fast-check";
import { assertAppendOnly, matchedPrefixLength } from "../../src/server/append-only";
import { assertRenderableAssistantContent } from "../../src/server/chat-request";
import { MESSAGE_MATCHERS, type MessageMatcherName } from "../../src/server/message-matchers";
import type { MessageMatcher, PolicyContext, TitoLike } from "../../src/server/policy";
import { describeSpellingBreak, describeSplitTurnBreak, firstSpellingBreak, firstSplitTurnBreak, spellingTolerant } from "../../src/server/replay-diagnosis";
import type { MilesRevision, NormalizedChatRequest, SessionRecord } from "../../src/server/types";
import {
  appendTurn,
  applyRollback,
  createLinearTrajectory,
  createV1Policy,
  currentTokenIds,
  findRollback,
  type LinearTrajectory,
  rollbackBase,
  type RollbackBase,
  type RollbackTarget,
} from "../../src/server/v1";
import type { ChatMessage } from "../../src/tokenizer/types";
import { expectEqual } from "../support/fast-expect";

const TITO: TitoLike = {
  maxTrimTokens: 0,
  allowedAppendRoles: new Set(["user", "tool"]),
  renderPromptIds: (messages) => messages.map((m, i) => 1000 + i * 10 + m.role.length),
  // Ids that depend on which stored history the request is merged onto, so a wrong base changes them.
  mergeTokens: (old, newer, stored) => [...stored, old.length, ...newer.slice(old.length).map((m, i) => 2000 + i * 10 + m.role.length)],
  compareWithCanonical: () => [],
};

/** The v1 prepare as written before the matched prefix was reused (every check compares from index 0). */
function referencePrepare(revision: MilesRevision, state: LinearTrajectory, request: NormalizedChatRequest, ctx: PolicyContext): number[] {
  const splitTurnAdvice = (): string | null => {
    const split = firstSplitTurnBreak(state.messages, request.messages, ctx.messagesMatch);
    if (split === null) return null;
    const advice = describeSplitTurnBreak(split.index, split.form);
    ctx.logger.warn(`v1 refused the request (400): ${advice}. The stored history is kept as it was`);
    return advice;
  };
  const warnIfOnlySpelling = (): void => {
    const split = firstSplitTurnBreak(state.messages, request.messages, ctx.messagesMatch);
    if (split !== null) {
      ctx.logger.warn(
        `v1 rollback: ${describeSplitTurnBreak(split.index, split.form)}. The session discards the stored turn and ` +
          `re-renders the pieces, so the trajectory no longer holds the model's own tokens for it`,
      );
      return;
    }
    if (matchedPrefixLength(state.messages, request.messages, spellingTolerant(ctx.messagesMatch)) < state.messages.length) return;
    const found = firstSpellingBreak(state.messages, request.messages, ctx.messagesMatch);
    if (found === null) return;
    ctx.logger.warn(
      `v1 rollback: ${describeSpellingBreak(found.index, found.difference)}. The session discards the stored turn and ` +
        `re-renders it, so the trajectory no longer holds the model's own tokens for it`,
    );
  };
  const promptOn = (base: RollbackBase): number[] => {
    if (base.turns === 0) return ctx.tito.renderPromptIds(request.messages, request.tools, request.chatTemplateKwargs);
    assertAppendOnly(base.messages, request.messages, ctx.tito.allowedAppendRoles, ctx.messagesMatch);
    const effective = [...base.messages, ...request.messages.slice(base.messages.length)];
    return ctx.tito.mergeTokens(base.messages, effective, base.tokenIds, request.tools, request.chatTemplateKwargs);
  };
  const rollback = findRollback(state, request.messages, ctx.messagesMatch);
  const renderFrom = rollback !== null ? rollback.keepMessages : state.checkpoints.length === 0 ? 0 : state.messages.length;
  assertRenderableAssistantContent(request.messages, renderFrom, splitTurnAdvice);
  if (rollback !== null) warnIfOnlySpelling();
  const logRollback = (target: RollbackTarget): void =>
    ctx.logger.info?.(`rolling back: ${state.checkpoints.length} -> ${target.keepCheckpoints} checkpoints, messages[:${target.keepMessages}]`);
  if (revision === "31f1ca96" && rollback !== null) {
    logRollback(rollback);
    applyRollback(state, rollback);
  }
  const promptIds = promptOn(rollbackBase(state, revision === "31f1ca96" ? null : rollback));
  if (revision !== "31f1ca96" && rollback !== null) {
    logRollback(rollback);
    applyRollback(state, rollback);
  }
  return promptIds;
}

const call = (id: string, args: string, extra: Record<string, unknown> = {}): NonNullable<ChatMessage["tool_calls"]>[number] => ({
  id,
  type: "function",
  function: { name: "get_weather", arguments: args },
  ...extra,
});

/** An assistant reply: plain text, or text with a call. */
const replyArb = fc.oneof(
  fc.constantFrom("Sunny.", "Cloudy.").map((content): ChatMessage => ({ role: "assistant", content })),
  fc
    .constantFrom("Beijing", "Paris")
    .map((city): ChatMessage => ({ role: "assistant", content: `Looking up ${city}.`, tool_calls: [call("c0", `{"location": "${city}"}`)] })),
);
/** What a client appends before the next generation. */
const appendedArb = fc.array(
  fc.oneof(
    fc.constantFrom("Next city?", "Summary please.").map((content): ChatMessage => ({ role: "user", content })),
    fc.constant<ChatMessage>({ role: "tool", content: '{"t": 22}', tool_call_id: "c0" }),
    fc.constant<ChatMessage>({ role: "system", content: "Be brief." }),
  ),
  { minLength: 1, maxLength: 3 },
);

/** How the next request is made from the stored history. */
type Edit =
  | { kind: "extend"; appended: ChatMessage[] }
  | { kind: "retry"; drop: number; appended: ChatMessage[] }
  | { kind: "respell"; at: number; how: "spaces" | "extra_key" | "index" | "other_args" }
  | { kind: "split"; at: number }
  | { kind: "parts"; at: number }
  | { kind: "replace"; at: number; message: ChatMessage }
  | { kind: "truncate"; keep: number };

const editArb: fc.Arbitrary<Edit> = fc.oneof(
  appendedArb.map((appended): Edit => ({ kind: "extend", appended })),
  fc.record({ kind: fc.constant("retry" as const), drop: fc.integer({ min: 1, max: 5 }), appended: appendedArb }),
  fc.record({
    kind: fc.constant("respell" as const),
    at: fc.nat(),
    how: fc.constantFrom("spaces" as const, "extra_key" as const, "index" as const, "other_args" as const),
  }),
  fc.record({ kind: fc.constant("split" as const), at: fc.nat() }),
  fc.record({ kind: fc.constant("parts" as const), at: fc.nat() }),
  fc.record({
    kind: fc.constant("replace" as const),
    at: fc.nat(),
    message: fc.oneof(
      replyArb,
      appendedArb.map((m) => m[0]),
    ),
  }),
  fc.record({ kind: fc.constant("truncate" as const), keep: fc.nat() }),
);

/** Index of the `at`-th assistant message of `messages` (modulo their count), or -1. */
function assistantAt(messages: readonly ChatMessage[], at: number): number {
  const indices = messages.flatMap((m, i) => (m.role === "assistant" ? [i] : []));
  return indices.length === 0 ? -1 : indices[at % indices.length];
}

function applyEdit(stored: readonly ChatMessage[], edit: Edit): ChatMessage[] {
  const copy = stored.map((m) => ({ ...m }));
  switch (edit.kind) {
    case "extend":
      return [...copy, ...edit.appended];
    case "retry":
      return [...copy.slice(0, Math.max(0, copy.length - edit.drop)), ...edit.appended];
    case "truncate":
      return copy.slice(0, edit.keep % (copy.length + 1));
    case "replace": {
      if (copy.length === 0) return [edit.message];
      copy[edit.at % copy.length] = edit.message;
      return [...copy, { role: "user", content: "And?" }];
    }
    default: {
      const i = assistantAt(copy, edit.at);
      if (i < 0) return [...copy, { role: "user", content: "And?" }];
      const m = copy[i];
      const calls = m.tool_calls ?? [];
      if (edit.kind === "respell" && calls.length > 0) {
        const args = calls[0].function.arguments as string;
        const id = calls[0].id ?? "c0";
        const respelled =
          edit.how === "spaces"
            ? call(id, args.replace(": ", ":"))
            : edit.how === "extra_key"
              ? call(id, args, { parsed: true })
              : edit.how === "index"
                ? call(id, args, { index: 0 })
                : call(id, args.replace("Beijing", "Oslo").replace("Paris", "Oslo"));
        copy[i] = { ...m, tool_calls: [respelled] };
      } else if (edit.kind === "split" && calls.length > 0) {
        copy.splice(i, 1, { role: "assistant", content: m.content }, { role: "assistant", content: null, tool_calls: calls });
      } else if (edit.kind === "parts" || edit.kind === "split") {
        copy[i] = { ...m, content: [{ type: "text", text: String(m.content) }] as unknown };
      }
      return [...copy, { role: "user", content: "And?" }];
    }
  }
}

const record = (): SessionRecord => ({
  timestamp: 1,
  request_timestamp: 0,
  method: "POST",
  path: "/v1/chat/completions",
  request: {},
  response: {},
  status_code: 200,
});

/** A stored trajectory of `turns` generated turns, as commits build it. */
function buildState(turns: Array<{ appended: ChatMessage[]; reply: ChatMessage }>): LinearTrajectory {
  const state = createLinearTrajectory();
  for (const { appended, reply } of turns) {
    const request = [...state.messages, ...appended];
    appendTurn(state, request, reply, [...currentTokenIds(state), request.length, 7], record());
  }
  return state;
}

const requestOf = (messages: ChatMessage[]): NormalizedChatRequest => ({
  messages,
  tools: null,
  chatTemplateKwargs: {},
  upstreamBody: { messages },
  clientStream: false,
});

/** Runs `prepare` on a copy of `state`; returns everything it showed: ids or the refusal, the state after, the log. */
function outcome(prepare: (state: LinearTrajectory, logs: string[]) => number[], state: LinearTrajectory): unknown {
  const copy: LinearTrajectory = {
    messages: state.messages.slice(),
    records: state.records.slice(),
    checkpoints: state.checkpoints.slice(),
    checkpointMessageEnds: state.checkpointMessageEnds.slice(),
  };
  const logs: string[] = [];
  let result: unknown;
  try {
    result = { ids: prepare(copy, logs) };
  } catch (error) {
    const e = error as { status?: number; message: string };
    result = { status: e.status, message: e.message };
  }
  return { result, logs, messages: copy.messages, checkpoints: copy.checkpoints, ends: copy.checkpointMessageEnds, records: copy.records.length };
}

/** Counts the matcher calls, to show the new path compares fewer pairs. */
function counting(matcher: MessageMatcher, counter: { calls: number }): MessageMatcher {
  return (a, b) => {
    counter.calls += 1;
    return matcher(a, b);
  };
}

describe("v1 prepare with the matched prefix reused equals the reference path", () => {
  const names = Object.keys(MESSAGE_MATCHERS) as MessageMatcherName[];
  test.each(["3311", "31f1ca96"] as const)("revision %s: ids or refusal, state, warnings and rollback logs on generated sessions", (revision) => {
    const policy = createV1Policy({ milesRevision: revision });
    const totals = { reference: 0, reused: 0 };
    const kinds = new Set<string>();
    fc.assert(
      fc.property(
        fc.array(fc.record({ appended: appendedArb, reply: replyArb }), { maxLength: 4 }),
        fc.array(editArb, { minLength: 1, maxLength: 2 }),
        fc.constantFrom(...names),
        (turns, edits, name) => {
          const state = buildState(turns);
          const messages = edits.reduce<ChatMessage[]>((acc, edit) => applyEdit(acc, edit), state.messages.slice());
          const request = requestOf(messages);
          const context = (logs: string[], counter: { calls: number }): PolicyContext => ({
            tokenizer: undefined as unknown as PolicyContext["tokenizer"],
            tito: TITO,
            defaultChatTemplateKwargs: {},
            messagesMatch: counting(MESSAGE_MATCHERS[name], counter),
            logger: { warn: (m: string) => logs.push(`warn ${m}`), info: (m: string) => logs.push(`info ${m}`) },
          });
          const reference = { calls: 0 };
          const reused = { calls: 0 };
          const expected = outcome((s, logs) => referencePrepare(revision, s, request, context(logs, reference)), state);
          const actual = outcome((s, logs) => policy.prepare(s, request, context(logs, reused)).promptIds, state);
          expectEqual(actual, expected);
          expect(reused.calls).toBeLessThanOrEqual(reference.calls);
          totals.reference += reference.calls;
          totals.reused += reused.calls;
          const shown = expected as { result: { status?: number }; logs: string[] };
          kinds.add(shown.result.status === undefined ? "ids" : `status ${shown.result.status}`);
          for (const line of shown.logs) kinds.add(line.split(":")[0]);
          for (const line of shown.logs) if (line.includes("tool-call spelling")) kinds.add("spelling");
          for (const line of shown.logs) if (line.includes("split into two")) kinds.add("split");
          for (const line of shown.logs) if (line.includes("list of content parts")) kinds.add("parts");
        },
      ),
      { numRuns: 1500 },
    );
    // The generated requests reach every outcome: prompts, refusals, rollbacks, and both rollback warnings.
    expect([...kinds].sort()).toEqual(
      expect.arrayContaining(["ids", "status 400", "info rolling back", "warn v1 rollback", "warn v1 refused the request (400)", "spelling", "split", "parts"]),
    );
    expect(totals.reused).toBeLessThan(totals.reference * 0.75);
  });
});
