// The mock's control routes for reply plans (`PUT`/`DELETE /_mock/plans/{routingKey}`) and a client for them.
// They let a fuzzer in one process drive a mock running in another (e.g. `session-parity mock`).
import { http, type RequestHandler } from "msw";
import { request, type Dispatcher } from "undici";
import { errorResponse, jsonResponse } from "./errors";
import { planProblem, type PlannedReply, type ReplyPlanRegistry } from "./reply-plans";

/** Prefix of the plan control routes; the routing key is the last path segment. */
const MOCK_PLANS_PATH = "/_mock/plans";

function planKey(url: string): string | null {
  const path = new URL(url).pathname;
  if (!path.startsWith(`${MOCK_PLANS_PATH}/`)) return null;
  const key = decodeURIComponent(path.slice(MOCK_PLANS_PATH.length + 1));
  return key === "" || key.includes("/") ? null : key;
}

/** msw handlers for `PUT /_mock/plans/{key}` (body `{"replies": [...]}`) and `DELETE /_mock/plans/{key}`. */
export function planRouteHandlers(plans: ReplyPlanRegistry): RequestHandler[] {
  return [
    http.put(
      ({ request: incoming }) => planKey(incoming.url) !== null,
      async ({ request: incoming }) => {
        const key = planKey(incoming.url) as string;
        let body: unknown;
        try {
          body = JSON.parse(await incoming.text());
        } catch (error) {
          return errorResponse(400, `plan body is not valid JSON (${(error as Error).message})`);
        }
        const replies = body !== null && typeof body === "object" ? (body as Record<string, unknown>).replies : undefined;
        const problem = planProblem(replies);
        if (problem !== null) return errorResponse(400, problem);
        plans.register(key, replies as PlannedReply[]);
        return jsonResponse(200, { status: "ok", routing_key: key, replies: (replies as unknown[]).length });
      },
    ),
    http.delete(
      ({ request: incoming }) => planKey(incoming.url) !== null,
      ({ request: incoming }) => {
        const key = planKey(incoming.url) as string;
        if (!plans.unregister(key)) return errorResponse(404, `no reply plan for routing key ${JSON.stringify(key)}`);
        return jsonResponse(200, { status: "ok" });
      },
    ),
  ];
}

/** Where a fuzzer registers plans: a registry in this process, or a mock's control routes. */
export interface PlanSink {
  /** Registers the plan of one routing key. */
  register(routingKey: string, replies: readonly PlannedReply[]): Promise<void>;
  /** Forgets it (no error when it is already gone). */
  unregister(routingKey: string): Promise<void>;
}

/** A {@link PlanSink} writing into a registry of this process. */
export function localPlanSink(plans: ReplyPlanRegistry): PlanSink {
  return {
    register: async (key, replies) => plans.register(key, replies),
    unregister: async (key) => {
      plans.unregister(key);
    },
  };
}

/**
 * A {@link PlanSink} calling the control routes of the mock at `backendUrl`.
 * Its `register` throws an Error naming the URL when the backend does not serve them.
 */
export function remotePlanSink(backendUrl: string, dispatcher?: Dispatcher): PlanSink {
  const base = backendUrl.replace(/\/+$/, "");
  const call = async (method: "PUT" | "DELETE", key: string, body?: unknown): Promise<{ status: number; text: string }> => {
    const url = `${base}${MOCK_PLANS_PATH}/${encodeURIComponent(key)}`;
    const reply = await request(url, {
      method,
      headers: body === undefined ? {} : { "content-type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
      dispatcher,
    });
    return { status: reply.statusCode, text: await reply.body.text() };
  };
  return {
    async register(key, replies) {
      const reply = await call("PUT", key, { replies });
      if (reply.status !== 200) {
        throw new Error(
          `PUT ${base}${MOCK_PLANS_PATH}/${key} answered ${reply.status}: ${reply.text.slice(0, 200)} ` +
            `(the fuzzer needs a mock backend serving its control routes, e.g. \`session-parity mock\`)`,
        );
      }
    },
    async unregister(key) {
      await call("DELETE", key);
    },
  };
}
