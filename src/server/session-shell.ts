// Request handling of the reference session server (SPEC §6): routes, the TITO chat proxy flow and the raw proxy.
// Version-specific behaviour lives behind the TrajectoryPolicy seam; this module only does transport and order.
import type { IncomingMessage, ServerResponse } from "node:http";
import { dumpsPy, PY_DEFAULT_JSON } from "../wire/py-json";
import { encodeSamplesChunks } from "../wire/samples-codec";
import { normalizeChatRequest, parseJsonBody, parseSamplesBody } from "./chat-request";
import { extractCompletion, renderFakeStream, stripReplayPayloads } from "./chat-reply";
import { BodyTooLargeError, readBoundedBody } from "./bounded-body";
import { passThroughHeaders, sendBytes, sendChunks, sendEmpty, sendError, sendJson, sendText, sendUpstreamReply } from "./http-io";
import type { AnyTrajectoryPolicy, PolicyContext, PolicyLogger } from "./policy";
import { packageVersion } from "./package-version";
import { SampleAssemblyError } from "./samples/assembly-error";
import { addAdditionR3Offset, type ReplayRequestOptions } from "./replay-request";
import { SessionEntry, SessionStore } from "./session-store";
import type { TitoKit } from "./tito-kit";
import { CompletedTurn, SessionHttpError, SessionRecord } from "./types";
import { forwardHeaders, UpstreamClient } from "./upstream";
import { ChatTemplateError } from "../tokenizer/chat-template";
import { redactAbsolutePaths } from "./redaction";
import { guardRequest } from "./request-guard";

/** Per-server limits and browser-facing checks the shell applies before routing. */
export interface ShellLimits {
  /** Request body limit in bytes (413 beyond). */
  maxBodyBytes: number;
  /** `Host` values answered (DNS-rebinding check), or null for no check (non-loopback bind). Set once listening. */
  allowedHosts: ReadonlySet<string> | null;
}

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

function sessionNotFound(id: string): SessionHttpError {
  return new SessionHttpError(404, `session not found: session_id=${id}`);
}

/** Routes requests and runs the chat proxy around the policy. One per server; owns the session table. */
export class SessionShell {
  private readonly store: SessionStore<unknown>;

  constructor(
    private readonly policy: AnyTrajectoryPolicy,
    private readonly ctx: PolicyContext,
    private readonly kit: TitoKit,
    private readonly upstream: UpstreamClient,
    private readonly instanceId: string | undefined,
    private readonly logger: PolicyLogger,
    private readonly replay?: ReplayRequestOptions,
    private readonly limits: ShellLimits = { maxBodyBytes: Number.MAX_SAFE_INTEGER, allowedHosts: null },
  ) {
    this.store = new SessionStore(() => policy.createState());
  }

  /** Drops every session (the server is closing). */
  clear(): void {
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
      throw error;
    }
    try {
      if (url.pathname === "/health") {
        if (method !== "GET") throw new SessionHttpError(405, `method ${method} not allowed on /health`);
        return this.health(res);
      }
      if (url.pathname === "/sessions" || url.pathname === "/sessions/") {
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
      if (error instanceof SessionHttpError) {
        if (error.plainText) return sendText(res, error.status, error.message);
        return sendError(res, error.status, error.message);
      }
      // A template that cannot render the client's messages (e.g. tool-call arguments that are not JSON) is the
      // client's mistake: 400 naming the message and field, never a 500 with an install path.
      if (error instanceof ChatTemplateError) return sendError(res, 400, redactAbsolutePaths(error.message));
      throw error;
    }
  }

  private health(res: ServerResponse): void {
    const payload: Record<string, string> = { status: "ok" };
    if (this.instanceId !== undefined) payload.session_server_instance_id = this.instanceId;
    // Not in the Python reply: lets `session-parity run` catch swapped --v1/--v2 URLs before any trajectory.
    payload.session_server_version = this.policy.version;
    payload.package_version = packageVersion();
    // Not in the Python reply either: which family and checkpoint this server renders with.
    payload.tito_model = this.kit.titoModel;
    payload.hf_checkpoint = this.kit.checkpointName;
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
    sendJson(res, 200, { session_id: id, records: view.records, metadata: view.metadata });
  }

  private async deleteSession(res: ServerResponse, id: string): Promise<void> {
    const entry = this.live(id);
    entry.closing = true;
    // Wait for an in-flight state update to finish before the session disappears.
    await entry.lock.runExclusive(() => {
      this.store.remove(id);
    });
    sendEmpty(res, 204);
  }

  private samples(res: ServerResponse, id: string, body: Buffer): void {
    const entry = this.live(id);
    const parsed = parseSamplesBody(parseJsonBody(body), this.policy.version === "v2");
    let result;
    try {
      result = this.policy.collectSamples(entry.state, parsed, this.ctx);
    } catch (error) {
      if (error instanceof SampleAssemblyError) throw new SessionHttpError(422, error.message, true);
      throw error;
    }
    let chunks: Uint8Array[];
    try {
      chunks = encodeSamplesChunks(result.samples, result.sessionMetadata, { emptyReason: result.emptyReason, fields: this.policy.wireFields });
    } catch (error) {
      throw new SessionHttpError(500, `samples encode error: ${(error as Error).message}`);
    }
    sendChunks(res, 200, chunks, { "content-type": "application/octet-stream" });
  }

  private async chat(req: IncomingMessage, res: ServerResponse, id: string, body: Buffer, requestTimestamp: number): Promise<void> {
    const entry = this.live(id);
    const request = normalizeChatRequest(parseJsonBody(body), this.kit.defaultKwargs, this.kit.mergeKwargs, this.replay);
    const upstreamBody = request.upstreamBody;

    // Phase 1 (lock): position the request and build the prompt ids (and the additional-R3 offset they imply).
    const prepared = await entry.lock.runExclusive(() => {
      if (entry.closing || !this.store.isLive(entry)) throw sessionNotFound(id);
      const turn = this.policy.prepare(entry.state, request, this.ctx);
      upstreamBody.input_ids = turn.promptIds;
      if (this.replay) addAdditionR3Offset(upstreamBody, this.replay, turn.checkpointIds, turn.promptIds);
      return turn;
    });

    // Phase 2 (no lock): the upstream call.
    const headers = forwardHeaders(req.headers, id);
    headers["content-type"] = "application/json";
    const result = await this.upstream.request("POST", "v1/chat/completions", "", headers, dumpsPy(upstreamBody, PY_DEFAULT_JSON));
    if (result.status !== 200) return sendUpstreamReply(res, result.status, result.headers, result.body);
    const completion = extractCompletion(result.body, this.ctx.tokenizer.vocabSize);

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
      const turn: CompletedTurn = {
        promptIds: prepared.promptIds,
        completionIds: completion.completionIds,
        assistantMessage: completion.assistantMessage,
        finishReason: completion.finishReason,
        responseId: completion.responseId,
        record,
      };
      this.policy.commit(entry.state, prepared.plan, request, turn, this.ctx);
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
    sendJson(res, 200, stripReplayPayloads(completion.response), headersOut);
  }

  private async proxy(req: IncomingMessage, res: ServerResponse, id: string, path: string, method: string, query: string, body: Buffer): Promise<void> {
    this.live(id);
    const headers = forwardHeaders(req.headers, id);
    const result = await this.upstream.request(method, path, query, headers, body.length > 0 ? body : null);
    sendUpstreamReply(res, result.status, result.headers, result.body);
  }
}
