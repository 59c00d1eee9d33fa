// Shared harness of the real-client tests: both reference servers under each built-in matcher, one mock backend,
// and the checks of what a session holds after a client's two-step tool conversation (records, tree, samples).
import { startMockBackend, weatherScript, type MockBackend, type ProcessFunction } from "../../src/backend";
import { buildWeatherInputSamples } from "../../src/fixture/input-samples";
import { SessionClient } from "../../src/fixture/session-client";
import { startSessionServer, type RunningSessionServer } from "../../src/server";
import type { MessageMatcherName } from "../../src/server/message-matchers";
import type { SessionServerVersion } from "../../src/server/types";
import { WIRE_FIELDS_V1, WIRE_FIELDS_V2, decodeSamplesReply } from "../../src/wire/samples-codec";
import type { Sample } from "../../src/wire/sample";

/** The built-in matchers, in the order the compatibility table lists them. */
export const MATCHERS: readonly MessageMatcherName[] = ["strict", "loose_tool_call", "split_assistant_turn", "role_content_only"];
/** Both server versions. */
const VERSIONS: readonly SessionServerVersion[] = ["v1", "v2"];

/** The user turn every client sends; the weather script answers it with a get_weather call for Beijing. */
export const QUESTION = "What's the weather in Beijing?";
/** What the weather script answers once the first tool result is in the prompt. */
export const SUMMARY = "Beijing is 22 degrees Celsius and sunny.";

/** One running server with the warnings it logged. */
export interface ServerUnderTest {
  version: SessionServerVersion;
  matcher: MessageMatcherName;
  server: RunningSessionServer;
  warnings: string[];
}

/** A mock backend plus one v1 and one v2 server per built-in matcher, all on loopback. */
export interface ClientBench {
  backend: MockBackend;
  servers: ServerUnderTest[];
  close(): Promise<void>;
}

/**
 * Starts the backend and one server per version and matcher; `close()` stops them all. `process` replaces the
 * weather script (a client that rewrites the tool's text needs a script that knows the rewritten text).
 */
export async function startClientBench(options: { process?: ProcessFunction; chatTemplateKwargs?: Record<string, unknown> } = {}): Promise<ClientBench> {
  const backend = await startMockBackend({ process: options.process ?? weatherScript });
  const servers: ServerUnderTest[] = [];
  try {
    for (const version of VERSIONS) {
      for (const matcher of MATCHERS) {
        const warnings: string[] = [];
        const server = await startSessionServer({
          version,
          backendUrl: backend.url,
          messageMatcher: matcher,
          chatTemplateKwargs: options.chatTemplateKwargs,
          logger: { warn: (m) => void warnings.push(m) },
        });
        servers.push({ version, matcher, server, warnings });
      }
    }
  } catch (error) {
    await Promise.all(servers.map((s) => s.server.close()));
    await backend.close();
    throw error;
  }
  return {
    backend,
    servers,
    async close() {
      await Promise.all(servers.map((s) => s.server.close()));
      await backend.close();
    },
  };
}

/** What a session holds after a client ran: records, the v2 tree, decoded samples, warnings logged meanwhile. */
export interface SessionOutcome {
  records: Array<Record<string, any>>;
  treeNodes: Array<[number, number | null]> | null;
  samples: Sample[];
  accumulatedTokenIds: number[];
  /** The session's `tito_session_mismatch` entries. */
  mismatch: unknown[];
  warnings: string[];
}

/** Reads what the session `id` holds (GET and the samples op), with the warnings logged since `warningsBefore`. */
async function readOutcome(client: SessionClient, id: string, target: ServerUnderTest, warningsBefore: number): Promise<SessionOutcome> {
  const snapshot = await client.snapshot(id);
  const payload = await client.collect(id, { max_seq_len: null, metadata: {} });
  const fields = target.version === "v1" ? WIRE_FIELDS_V1 : WIRE_FIELDS_V2;
  const decoded = decodeSamplesReply(payload, buildWeatherInputSamples(1)[0], { fields });
  const metadata = snapshot.metadata as Record<string, any>;
  const treeNodes = metadata.tree
    ? (metadata.tree.nodes as Array<{ id: number; parent: number | null }>).map((n): [number, number | null] => [n.id, n.parent])
    : null;
  return {
    records: snapshot.records as Array<Record<string, any>>,
    treeNodes,
    samples: decoded.samples,
    accumulatedTokenIds: metadata.accumulated_token_ids as number[],
    mismatch: (metadata.tito_session_mismatch as unknown[] | undefined) ?? [],
    warnings: target.warnings.slice(warningsBefore),
  };
}

/**
 * Opens a session on `target`, hands its OpenAI base URL (`.../sessions/{id}/v1`) to `drive`, then reads the
 * session back (GET and the samples op) and deletes it.
 */
export async function runInSession<T>(target: ServerUnderTest, drive: (baseURL: string) => Promise<T>): Promise<{ result: T; outcome: SessionOutcome }> {
  const client = new SessionClient(target.server.url);
  const id = await client.createSession();
  const warningsBefore = target.warnings.length;
  try {
    const result = await drive(`${client.sessionUrl(id)}/v1`);
    return { result, outcome: await readOutcome(client, id, target, warningsBefore) };
  } finally {
    await client.deleteSession(id);
  }
}

/** {@link runInSession} for a client the server refuses: `drive` must reject; its error and the session after it. */
export async function runRefusedInSession(
  target: ServerUnderTest,
  drive: (baseURL: string) => Promise<unknown>,
): Promise<{ error: unknown; outcome: SessionOutcome }> {
  const client = new SessionClient(target.server.url);
  const id = await client.createSession();
  const warningsBefore = target.warnings.length;
  try {
    const error = await drive(`${client.sessionUrl(id)}/v1`).then(
      () => {
        throw new Error("the client run succeeded, but the server should have refused it");
      },
      (reason: unknown) => reason,
    );
    return { error, outcome: await readOutcome(client, id, target, warningsBefore) };
  } finally {
    await client.deleteSession(id);
  }
}

function completionIds(record: Record<string, any>): number[] {
  return (record.response.choices[0].meta_info.output_token_logprobs as Array<[number, number]>).map((pair) => pair[1]);
}

/**
 * One continuous trajectory: two records (v2: node 1 under node 0), and one training sample that starts with
 * the model's own tokens of turn one, trains on both generations (w0, w1) and nothing else.
 */
export function expectContinuous(version: SessionServerVersion, outcome: SessionOutcome): void {
  expect(outcome.warnings).toEqual([]);
  expect(outcome.records).toHaveLength(2);
  if (version === "v2")
    expect(outcome.treeNodes).toEqual([
      [0, null],
      [1, 0],
    ]);
  expect(outcome.samples).toHaveLength(1);
  const [first, second] = outcome.records;
  const sample = outcome.samples[0];
  const turnOne = [...first.request.input_ids, ...completionIds(first)];
  expect(sample.tokens.slice(0, turnOne.length)).toEqual(turnOne);
  expect(second.request.input_ids.slice(0, turnOne.length)).toEqual(turnOne);
  expect(sample.tokens).toEqual(outcome.accumulatedTokenIds);
  expect(sample.weight_versions).toEqual(["w0", "w1"]);
  const trained = (sample.loss_mask ?? []).reduce((sum: number, bit: number) => sum + bit, 0);
  expect(trained).toBe(completionIds(first).length + completionIds(second).length);
}

/**
 * A broken trajectory: the replayed tool-call turn did not match, so v1 rolled back (one record left, the
 * sample trains on the second generation only) and v2 started a new root; the server said why, at `index`.
 */
export function expectBroken(version: SessionServerVersion, outcome: SessionOutcome, index: number, cause: RegExp): void {
  expect(outcome.warnings).toHaveLength(1);
  expect(outcome.warnings[0]).toContain(`the replayed assistant message at index ${index} differs from the stored one only in its tool-call spelling`);
  expectBrokenWarning(version, outcome, cause);
}

/**
 * A refused replay: the second request got `400` with an error matching `error` (as the client's exception
 * carries it), the server logged one warning matching `warning`, and the session still holds the first turn alone,
 * as it did before the refused request (v1: nothing rolled back; v2: node 0 alone, still the view).
 */
export function expectRefused(version: SessionServerVersion, refusal: { error: unknown; outcome: SessionOutcome }, error: RegExp, warning: RegExp): void {
  const { outcome } = refusal;
  // the openai SDK's APIError (which the frameworks let through) carries the status and the body's `error` field
  expect(refusal.error).toMatchObject({ status: 400, error: expect.stringMatching(error) });
  expect(outcome.warnings).toHaveLength(1);
  expect(outcome.warnings[0]).toMatch(warning);
  expect(outcome.warnings[0]).toMatch(version === "v1" ? /^v1 refused the request \(400\): / : /^v2 refused the request \(400\) instead of extending node 0: /);
  expect(outcome.records).toHaveLength(1);
  expect(outcome.records[0].response.choices[0].message.tool_calls).toHaveLength(1); // the stored tool-call turn
  if (version === "v2") expect(outcome.treeNodes).toEqual([[0, null]]);
  expect(outcome.samples.map((s) => s.weight_versions)).toEqual([["w0"]]);
  const sample = outcome.samples[0];
  expect(sample.tokens).toEqual(outcome.accumulatedTokenIds);
  expect(sample.tokens).toEqual([...outcome.records[0].request.input_ids, ...completionIds(outcome.records[0])]);
}

/** {@link expectBroken} for any cause: one warning matching `warning`, and the broken records, tree and samples. */
export function expectBrokenWarning(version: SessionServerVersion, outcome: SessionOutcome, warning: RegExp): void {
  expect(outcome.warnings).toHaveLength(1);
  expect(outcome.warnings[0]).toMatch(warning);
  if (version === "v1") {
    expect(outcome.warnings[0]).toMatch(/^v1 rollback: /);
    expect(outcome.records).toHaveLength(1);
    expect(outcome.samples).toHaveLength(1);
    expect(outcome.samples[0].weight_versions).toEqual(["w1"]);
  } else {
    expect(outcome.warnings[0]).toMatch(/^v2 starts a new root instead of extending node 0: /);
    expect(outcome.treeNodes).toEqual([
      [0, null],
      [1, null],
    ]);
    expect(outcome.records).toHaveLength(1); // the active path: the new root alone
    // two roots, so no retry superseded the other: both leaves become samples (higher leaf id first, as
    // drop_retries orders equal-depth survivors) and neither holds both generations
    expect(outcome.samples.map((s) => s.weight_versions)).toEqual([["w1"], ["w0"]]);
  }
}
