// Request handling of the reference session server (SPEC §6): routes, the TITO chat proxy flow and the raw proxy.
// Version-specific behaviour lives behind the TrajectoryPolicy seam; this module only does transport and order.
import type { IncomingMessage, ServerResponse } from "node:http";
import { encodeSamplesChunks } from "../wire/samples-codec";
import { normalizeChatRequest, parseJsonBody, parseSamplesBody } from "./chat-request";
import { readSplitTurns } from "./split-turns";
import { extractCompletion, renderFakeStream, stripReplayPayloads } from "./chat-reply";
import { BodyAbortedError, BodyTooLargeError, readBoundedBody } from "./bounded-body";
import { passThroughHeaders, sendBytes, sendChunks, sendEmpty, sendError, sendErrorText, sendJson, sendJsonText, sendUpstreamReply } from "./http-io";
import type { AnyTrajectoryPolicy, PolicyContext, PolicyLogger } from "./policy";
import { packageVersion } from "./package-version";
import { SampleAssemblyError } from "./samples/assembly-error";
import type { TrajectoryDumpWriter } from "./trajectory-dump";
import { redactAbsolutePaths } from "./redaction";
import { CHECKED_OUTPUT_BYTES_PER_TOKEN, rememberRecordOutput } from "./samples/turn-samples";
import { addAdditionR3Offset, type ReplayRequestOptions } from "./replay-request";
import { formatMiB, RequestTooLargeError, SESSION_OVERHEAD_BYTES, SessionBudgetError, SessionEntry, SessionStore, type SessionBudget } from "./session-store";
import { assertMetadataFitsReply, SAMPLES_HEAP_SHARE, SAMPLES_REQUEST_BUDGET_SHARE, samplesReplySize } from "./samples-admission";
import { suffixRecordBytes } from "./record-charge";
import { type SharedHistory, shareStoredHistory } from "./shared-history";
import { RecordTexts, textHeapBytes, withKnownTexts } from "./record-spellings";
import { sharedRecordRun } from "./record-ids";
import type { TitoKit } from "./tito-kit";
import { type SentBody, spellUpstreamBody } from "./upstream-body";
import { CompletedTurn, NormalizedChatRequest, SessionHttpError, SessionRecord } from "./types";
import { forwardHeaders, UpstreamClient } from "./upstream";
import { ChatTemplateError } from "../tokenizer/chat-template";
import { guardRequest } from "./request-guard";

/** Per-server limits and browser-facing checks the shell applies before routing. */
export interface ShellLimits {
  /** Request body limit in bytes (413 beyond). */
  maxBodyBytes: number;
  /** `Host` values answered (DNS-rebinding check), or null for no check (non-loopback bind). Set once listening. */
  allowedHosts: ReadonlySet<string> | null;
  /** The session budget (default: none). */
  sessions?: SessionBudget;
  /** The clock idle expiry reads, in ms (default Date.now). */
  now?: () => number;
}

/** Rough upper bound of prompt tokens per byte of a chat body, for the reservation made before positioning. */
const TOKENS_PER_BODY_BYTE = 1 / 3;
/** Heap bytes per stored token id: the record's `input_ids` and the checkpoint copy, 8 bytes each. */
const BYTES_PER_TOKEN = 16;
/**
 * Heap bytes a parsed chat body takes at most per byte of its text (strings a byte a character, objects' headers and
 * slots): what a commit may store of it, reserved without walking the parsed body.
 */
const HEAP_BYTES_PER_BODY_BYTE = 2;
/** Least charge a reclaim frees when it can: one reclaim then makes room for many requests. */
const MIN_RECLAIM_BYTES = 4 * 1024 * 1024;

const PROXY_METHODS = new Set(["GET", "POST", "PUT", "DELETE", "PATCH"]);

/**
 * Seconds since the epoch as a float with sub-millisecond precision (like Python's time.time()). Read from the
 * monotonic high-resolution clock anchored at the process's epoch origin, so a record's `timestamp` never
 * precedes its `request_timestamp` and a whole-millisecond wall clock never yields an integer.
 */
function nowSeconds(): number {
  return (performance.timeOrigin + performance.now()) / 1000;
}

/** The id segment of a session path, percent-decoded; a malformed escape is kept raw (no session has such an id). */
function decodeSessionId(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

/** What the shell knows of a stored record: the heap bytes it is charged, the texts its parts were written as. */
interface RecordFacts {
  charge: number;
  texts: RecordTexts | undefined;
  /** The part of `charge` for the ids arrays it holds while it is its session's newest record (0 once shared). */
  idsBytes: number;
}

/** Each session's newest record: the only one whose prompt ids and request text are its own (see {@link settleOlder}). */
const newestRecords = new WeakMap<SessionEntry<unknown>, SessionRecord>();

/** Each stored record's facts (set when the record is committed; records are never shared by sessions). */
const recordFacts = new WeakMap<SessionRecord, RecordFacts>();

/** Heap bytes of a packed array of `length` small integers (as retained-size.ts counts it). */
const idsArrayBytes = (length: number): number => 48 + 8 * length;
/** Heap bytes a shared record's ids cost besides its run's own ids: the runs, the accessor and its closure. */
const SHARED_IDS_OVERHEAD = 256;

/**
 * Charges a record that stopped being its session's newest for what it holds now: its prompt ids read from the shared
 * runs (only the ids its checkpoint added are its own), its request text dropped (the view writes the request from
 * the record; a later turn spells what it does not copy from the newest). The charge per turn so grows with the
 * tokens the turn added, not with the whole conversation.
 */
function settleOlder(record: SessionRecord): void {
  const facts = recordFacts.get(record);
  if (facts === undefined) return;
  const run = sharedRecordRun(record);
  if (run !== undefined && facts.idsBytes > 0) {
    facts.charge += SHARED_IDS_OVERHEAD + idsArrayBytes(run.base?.ownLength ?? run.ownLength) - facts.idsBytes;
    facts.idsBytes = 0;
  }
  if (facts.texts !== undefined) facts.charge -= facts.texts.dropRequest();
}

function sessionNotFound(id: string): SessionHttpError {
  return new SessionHttpError(404, `session not found: session_id=${id}`);
}

/** What a committed turn's charge is computed from. */
interface CommittedCharge {
  turn: CompletedTurn;
  /** What its request shares with the stored record it builds on (charged to that record). */
  shared: SharedHistory;
  texts: RecordTexts;
  /** The reply's retained size when its parse knew it. */
  responseBytes: number | undefined;
}

/** Routes requests and runs the chat proxy around the policy. One per server; owns the session table. */
export class SessionShell {
  private readonly store: SessionStore<unknown>;
  /**
   * Sessions with a stored record that keeps its texts, oldest first: what the session budget may drop before it
   * refuses a request ({@link dropKeptTexts}).
   */
  private readonly textHolders = new Set<SessionEntry<unknown>>();
  private readonly removeReclaimer: () => void;

  constructor(
    private readonly policy: AnyTrajectoryPolicy,
    private readonly ctx: PolicyContext,
    private readonly kit: TitoKit,
    private readonly upstream: UpstreamClient,
    private readonly instanceId: string | undefined,
    private readonly logger: PolicyLogger,
    private readonly replay?: ReplayRequestOptions,
    private readonly limits: ShellLimits = { maxBodyBytes: Number.MAX_SAFE_INTEGER, allowedHosts: null },
    private readonly dump?: TrajectoryDumpWriter,
  ) {
    this.store = new SessionStore(
      () => policy.createState(),
      limits.sessions,
      limits.now,
      (entry, idleMs) => {
        this.textHolders.delete(entry);
        logger.info?.(`session ${entry.id} expired after ${(idleMs / 1000).toFixed(1)} s idle (session TTL); freed about ${formatMiB(entry.bytes)}`);
      },
    );
    this.removeReclaimer = this.store.addReclaimer((bytes) => this.dropKeptTexts(bytes));
  }

  /**
   * Drops the texts stored records keep beside their parsed request and response, oldest sessions first, until about
   * `bytes` are freed (at least {@link MIN_RECLAIM_BYTES}, so a full store does not walk its sessions per request).
   * They are a cache: without them the session view writes the record again and a later turn spells its prompt
   * whole, to the same bytes. Returns the bytes of charge freed.
   */
  private dropKeptTexts(bytes: number): number {
    const target = Math.max(bytes, MIN_RECLAIM_BYTES);
    let freed = 0;
    for (const entry of this.textHolders) {
      if (freed >= target) break;
      this.textHolders.delete(entry);
      const records = this.policy.storedRecords?.(entry.state) ?? [];
      let dropped = 0;
      for (const record of records) {
        const facts = recordFacts.get(record);
        if (facts?.texts === undefined) continue;
        dropped += facts.texts.heapBytes;
        facts.charge -= facts.texts.heapBytes;
        facts.texts = undefined;
      }
      if (dropped > 0 && this.store.isLive(entry)) this.recharge(entry);
      freed += dropped;
    }
    if (freed > 0) this.logger.info?.(`session budget: dropped the kept texts of stored records (${formatMiB(freed)}) to make room`);
    return freed;
  }

  /** What the store holds and the budget it enforces. */
  usage(): { sessions: number; bytes: number; budgetHeldBytes: number; budgetBytes: number } {
    return { sessions: this.store.size, bytes: this.store.heldBytes, budgetHeldBytes: this.store.poolHeldBytes, budgetBytes: this.store.budgetBytes };
  }

  /** Drops every session (the server is closing). */
  clear(): void {
    this.removeReclaimer();
    this.textHolders.clear();
    this.store.clear();
  }

  /**
   * Answers one request. Protocol errors become their status with `{"error": ...}` (or text/plain for samples);
   * anything else rejects, and the caller answers 500.
   */
  async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const requestTimestamp = nowSeconds();
    const method = (req.method ?? "GET").toUpperCase();
    const url = new URL(req.url ?? "/", "http://session-server.invalid");
    const query = url.search.startsWith("?") ? url.search.slice(1) : "";
    const refusal = guardRequest(method, req.headers, this.limits.allowedHosts);
    if (refusal !== null) {
      req.resume();
      return sendError(res, refusal.status, refusal.message);
    }
    let body: Buffer;
    try {
      body = await readBoundedBody(req, this.limits.maxBodyBytes);
    } catch (error) {
      if (error instanceof BodyTooLargeError) return sendError(res, 413, error.message);
      // the client is gone (an aborted upload): nothing to answer, nothing stored was touched, nothing to log as a fault
      if (error instanceof BodyAbortedError) {
        res.destroy();
        return;
      }
      throw error;
    }
    try {
      if (url.pathname === "/health") {
        if (method !== "GET") throw new SessionHttpError(405, `method ${method} not allowed on /health`);
        return this.health(res);
      }
      if (url.pathname === "/sessions" || url.pathname === "/sessions/") {
        // The only route besides chat that grows the store: refused with 503 when the session budget is reached.
        if (method !== "POST") throw new SessionHttpError(405, `method ${method} not allowed on /sessions`);
        return sendJson(res, 200, { session_id: this.store.create().id });
      }
      const match = /^\/sessions\/([^/]+)(?:\/(.*))?$/.exec(url.pathname);
      if (!match) throw new SessionHttpError(404, `not found: ${url.pathname}`);
      const id = decodeSessionId(match[1]);
      const rest = match[2] ?? "";
      if (rest === "") {
        if (method === "GET") return this.getSession(res, id);
        if (method === "DELETE") return await this.deleteSession(res, id);
        throw new SessionHttpError(405, `method ${method} not allowed on /sessions/{id}`);
      }
      if (method === "POST" && rest === "v1/chat/completions") return await this.chat(req, res, id, body, requestTimestamp);
      if (method === "POST" && rest === "samples") return this.samples(res, id, body);
      if (!PROXY_METHODS.has(method)) throw new SessionHttpError(405, `method ${method} not allowed on /sessions/{id}/${rest}`);
      return await this.proxy(req, res, id, rest, method, query, body);
    } catch (error) {
      if (error instanceof SessionBudgetError) {
        return sendError(res, 503, error.message, { "retry-after": String(error.retryAfterSeconds) });
      }
      if (error instanceof RequestTooLargeError) return sendError(res, 413, error.message);
      if (error instanceof SessionHttpError) {
        if (error.plainText) return sendErrorText(res, error.status, error.message);
        return sendError(res, error.status, error.message);
      }
      // A template that cannot render the client's messages (e.g. tool-call arguments that are not JSON) is the
      // client's mistake: 400 naming the message and field, never a 500 with an install path.
      if (error instanceof ChatTemplateError) return sendError(res, 400, error.message);
      throw error;
    }
  }

  private health(res: ServerResponse): void {
    const payload: Record<string, unknown> = { status: "ok" };
    if (this.instanceId !== undefined) payload.session_server_instance_id = this.instanceId;
    // Not in the Python reply: lets `session-parity run` catch swapped --v1/--v2 URLs before any trajectory.
    payload.session_server_version = this.policy.version;
    payload.package_version = packageVersion();
    // Not in the Python reply either: which family and checkpoint this server renders with.
    payload.tito_model = this.kit.titoModel;
    payload.hf_checkpoint = this.kit.checkpointName;
    // ...and the template and default kwargs it renders with, so a run can tell two sides configured apart
    payload.chat_template = this.kit.templateSource;
    payload.chat_template_origin = this.kit.templateOrigin;
    payload.chat_template_kwargs = this.kit.defaultKwargs;
    sendJson(res, 200, payload);
  }

  private live(id: string): SessionEntry<unknown> {
    const entry = this.store.get(id);
    if (!entry || entry.closing) throw sessionNotFound(id);
    return entry;
  }

  private getSession(res: ServerResponse, id: string): void {
    const entry = this.live(id);
    const view = this.policy.view(entry.state, this.ctx);
    sendJson(res, 200, {
      session_id: id,
      records: view.records.map((record) => withKnownTexts(record, recordFacts.get(record)?.texts)),
      metadata: view.metadata,
    });
  }

  private async deleteSession(res: ServerResponse, id: string): Promise<void> {
    const entry = this.live(id);
    entry.closing = true;
    // Wait for an in-flight state update to finish before the session disappears.
    await entry.lock.runExclusive(() => {
      this.store.remove(id);
      this.textHolders.delete(entry);
    });
    sendEmpty(res, 204);
  }

  private samples(res: ServerResponse, id: string, body: Buffer): void {
    const entry = this.live(id);
    const parsed = parseSamplesBody(parseJsonBody(body), this.policy.version === "v2");
    if (parsed.metadata !== undefined) assertMetadataFitsReply(parsed.metadata, body);
    // Charged like a chat turn, before any work: the reply's projected size (the request's metadata once per sample
    // that carries it, plus the samples) is held until the reply is sent. The heap guard weighs all of it; the byte
    // budget what the request adds (reading what is stored is never refused by the budget).
    const reply = samplesReplySize(this.policy, entry.state, parsed.metadata === undefined ? 0 : body.length);
    const release = this.store.reserve(reply.bytes, reply.what, {
      aloneShare: SAMPLES_REQUEST_BUDGET_SHARE,
      budgetBytes: reply.requestBytes,
      heapShare: SAMPLES_HEAP_SHARE,
    });
    let chunks: Uint8Array[];
    let result;
    try {
      try {
        result = this.policy.collectSamples(entry.state, parsed, this.ctx);
      } catch (error) {
        if (error instanceof SampleAssemblyError) throw new SessionHttpError(422, error.message, true);
        throw error;
      }
      try {
        chunks = encodeSamplesChunks(result.samples, result.sessionMetadata, { emptyReason: result.emptyReason, fields: this.policy.wireFields });
      } catch (error) {
        throw new SessionHttpError(500, `samples encode error: ${(error as Error).message}`);
      }
    } catch (error) {
      release();
      throw error;
    }
    if (this.dump !== undefined) {
      try {
        this.dump.write(id, result.samples);
      } catch (error) {
        release();
        throw new SessionHttpError(500, redactAbsolutePaths(`--save-trajectories: cannot write ${this.dump.pathFor(id)}: ${(error as Error).message}`));
      }
    }
    // the chunks stay in memory until the socket took them
    res.once("close", release);
    sendChunks(res, 200, chunks, { "content-type": "application/octet-stream" });
  }

  private async chat(req: IncomingMessage, res: ServerResponse, id: string, body: Buffer, requestTimestamp: number): Promise<void> {
    const entry = this.live(id);
    // split_assistant_turn reads a turn re-sent in pieces as one message before anything checks or matches it
    const parsed = readSplitTurns(parseJsonBody(body), this.ctx.messagesMatch);
    const request = normalizeChatRequest(parsed, this.kit.defaultKwargs, this.kit.mergeKwargs, this.replay);
    // Room for what a commit will store, reserved before anything changes (a 503 here loses nothing): at most the
    // request body as parsed, plus its prompt ids twice (record and checkpoint), counted from the body's length (no
    // walk of the history it repeats). The commit charges what the turn adds.
    const reserved = HEAP_BYTES_PER_BODY_BYTE * body.length + BYTES_PER_TOKEN * Math.ceil(body.length * TOKENS_PER_BODY_BYTE);
    const release = this.store.reserve(reserved, "this chat turn");
    this.store.requestStarted(entry);
    try {
      await this.chatTurn(req, res, entry, request, requestTimestamp);
    } finally {
      // the session is idle from the end of this turn, however long its upstream call took
      this.store.requestEnded(entry);
      release();
    }
  }

  /**
   * Sets a session's charge from the records its state holds (a rollback frees what it discards); with `committed`,
   * first charges the turn just committed (its upstream body as sized when reserved, its texts, its reply's size).
   */
  private recharge(entry: SessionEntry<unknown>, committed?: CommittedCharge): void {
    if (committed !== undefined) {
      const { turn, shared, texts, responseBytes } = committed;
      const tokens = turn.promptIds.length + turn.completionIds.length;
      const outputReading = CHECKED_OUTPUT_BYTES_PER_TOKEN * turn.completionIds.length;
      const idsBytes = idsArrayBytes(turn.promptIds.length) + 8 * tokens;
      recordFacts.set(turn.record, { charge: suffixRecordBytes(turn, shared, responseBytes) + 8 * tokens + outputReading + texts.heapBytes, texts, idsBytes });
      if (this.policy.storedRecords !== undefined) this.textHolders.add(entry);
      const older = newestRecords.get(entry);
      newestRecords.set(entry, turn.record);
      if (older !== undefined && older !== turn.record) settleOlder(older);
    }
    const records = this.policy.storedRecords?.(entry.state);
    if (records === undefined) {
      // A custom policy that does not list its records: charges only grow, until DELETE frees them all.
      if (committed !== undefined) this.store.charge(entry, entry.bytes + (recordFacts.get(committed.turn.record)?.charge ?? 0));
      return;
    }
    let bytes = SESSION_OVERHEAD_BYTES;
    for (const record of records) bytes += recordFacts.get(record)?.charge ?? 0;
    this.store.charge(entry, bytes);
  }

  /**
   * The body a stored record sent, whose prompt ids and messages a new request likely extends: the policy's hint (v1:
   * the last turn kept; v2: the attach node; null: none), else the newest stored record's. Only a hint:
   * {@link spellUpstreamBody} checks what it copies.
   */
  private promptBase(entry: SessionEntry<unknown>, hint: SessionRecord | null | undefined): SentBody | undefined {
    const record = this.baseRecord(entry, hint);
    return record === undefined ? undefined : recordFacts.get(record)?.texts?.sentBody();
  }

  /** The stored record a request builds on: the policy's hint (null: none), else the newest stored record. */
  private baseRecord(entry: SessionEntry<unknown>, hint: SessionRecord | null | undefined): SessionRecord | undefined {
    if (hint === null) return undefined;
    if (hint !== undefined) return hint;
    const records = this.policy.storedRecords?.(entry.state);
    return records === undefined || records.length === 0 ? undefined : records[records.length - 1];
  }

  private async chatTurn(
    req: IncomingMessage,
    res: ServerResponse,
    entry: SessionEntry<unknown>,
    request: NormalizedChatRequest,
    requestTimestamp: number,
  ): Promise<void> {
    const id = entry.id;
    const upstreamBody = request.upstreamBody;

    // Phase 1 (lock): position the request and build the prompt ids (and the additional-R3 offset they imply).
    const prepared = await entry.lock.runExclusive(() => {
      if (entry.closing || !this.store.isLive(entry)) throw sessionNotFound(id);
      const turn = this.policy.prepare(entry.state, request, this.ctx);
      this.recharge(entry);
      upstreamBody.input_ids = turn.promptIds.slice(); // the record keeps it: an exactly sized copy, no growth slack
      if (this.replay) addAdditionR3Offset(upstreamBody, this.replay, turn.checkpointIds, turn.promptIds);
      // the history this request repeats is the stored record's objects from now on (spelled alike: the same bytes)
      const shared = shareStoredHistory(upstreamBody, this.baseRecord(entry, turn.baseRecord));
      return { ...turn, shared };
    });

    // Phase 2 (no lock): the upstream call.
    const headers = forwardHeaders(req.headers, id);
    headers["content-type"] = "application/json";
    // the bytes of dumpsPy(upstreamBody, PY_DEFAULT_JSON), the prompt ids the base record sent copied, not spelled again
    const { bytes, sent } = spellUpstreamBody(upstreamBody, this.promptBase(entry, prepared.baseRecord));
    const result = await this.upstream.request("POST", "v1/chat/completions", "", headers, bytes);
    if (result.status !== 200) return sendUpstreamReply(res, result.status, result.headers, result.body);
    const completion = extractCompletion(result.body, this.ctx.tokenizer.vocabSize);
    // The session view copies these texts instead of spelling the record's request and response again; the session
    // is charged for them (the default text is ASCII; a reply spelled for the client later is about its bytes' size).
    const spelled = completion.spelledResponse?.text;
    const responseTextBytes = spelled !== undefined ? textHeapBytes(spelled, result.body.length) : request.clientStream ? 0 : result.body.length;
    const texts = new RecordTexts(sent, spelled, sent.heapBytes + responseTextBytes);

    // Phase 3 (lock): commit unless the session went away meanwhile.
    await entry.lock.runExclusive(() => {
      if (entry.closing || !this.store.isLive(entry)) {
        this.logger.warn(`session ${id} closed during the upstream call; skipping the state update`);
        return;
      }
      const record: SessionRecord = {
        timestamp: nowSeconds(),
        request_timestamp: requestTimestamp,
        method: "POST",
        path: "/v1/chat/completions",
        request: upstreamBody,
        response: completion.response,
        status_code: result.status,
      };
      rememberRecordOutput(record); // the samples op's reading of its output pairs, taken while the reply is fresh
      const turn: CompletedTurn = {
        promptIds: prepared.promptIds,
        completionIds: completion.completionIds,
        assistantMessage: completion.assistantMessage,
        finishReason: completion.finishReason,
        responseId: completion.responseId,
        record,
      };
      if (this.policy.commit(entry.state, prepared.plan, request, turn, this.ctx))
        this.recharge(entry, { turn, shared: prepared.shared, texts, responseBytes: completion.responseBytes });
    });

    if (request.clientStream) {
      return sendBytes(res, 200, renderFakeStream(completion.response), {
        "content-type": "text/event-stream",
        "cache-control": "no-cache",
        "x-accel-buffering": "no",
      });
    }
    const headersOut = passThroughHeaders(result.headers);
    delete headersOut["content-type"];
    const reply = stripReplayPayloads(completion.response);
    const unchanged = reply === completion.response;
    const text = sendJsonText(res, 200, unchanged && completion.spelledResponse !== undefined ? completion.spelledResponse : reply, headersOut);
    if (text !== undefined && unchanged) texts.response = text;
  }

  private async proxy(req: IncomingMessage, res: ServerResponse, id: string, path: string, method: string, query: string, body: Buffer): Promise<void> {
    const entry = this.live(id);
    const headers = forwardHeaders(req.headers, id);
    this.store.requestStarted(entry);
    let result;
    try {
      result = await this.upstream.request(method, path, query, headers, body.length > 0 ? body : null);
    } finally {
      this.store.requestEnded(entry);
    }
    sendUpstreamReply(res, result.status, result.headers, result.body);
  }
}
