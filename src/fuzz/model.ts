// A pure model of the v1 and v2 session servers, written from docs/PROTOCOL.md and the Python servers' rules,
// that predicts each call's outcome, the records on the active path, the v2 tree and the leaves the default picker keeps.
import type { ChatMessage } from "../tokenizer/types";
import { applyAction, historyMessages, initialHistory, type HistoryEntry } from "./conversation";
import { predictedAssistantMessage } from "./plan";
import { scheduleCalls, type AgentSchedule } from "./schedule";

/** What the model expects one call to do on one server. */
interface CallPrediction {
  /** The call's index in the schedule (0 = first call). */
  call: number;
  /** HTTP status of the chat call: 200, v1's 400 (deep rollback), v2's 409 (extends a truncated node). */
  status: 200 | 400 | 409;
  /** The same in words (rollback, attach node, new root, sibling). */
  note: string;
}

/** What the model expects of one server for a whole schedule. */
export interface ServerPrediction {
  calls: CallPrediction[];
  /** Calls whose records `GET /sessions/{id}` shows, in order (v1: the trajectory; v2: the active path). */
  records: number[];
}

/** The v2 tree the model expects. */
interface TreePrediction {
  /** `[id, parent]` per node in commit order. */
  nodes: Array<[number, number | null]>;
  /** `[node_id, path_node_ids]` per leaf in id order. */
  leaves: Array<[number, number[]]>;
  /** The call that produced each node. */
  nodeCalls: number[];
  /** Leaves the default picker keeps, in the order it returns them (deepest first, then newest). */
  kept: number[];
}

/** The model's whole prediction for a schedule. */
export interface SchedulePrediction {
  v1: ServerPrediction;
  v2: ServerPrediction & { tree: TreePrediction };
  /** True when the v1 and v2 training payloads must be equal; otherwise `why` says how they differ. */
  agree: boolean;
  /** Why they agree or must differ, in words. */
  why: string;
}

/**
 * The key two messages share exactly when a session server treats them as the same history entry: role, content,
 * reasoning_content and tool_calls (each call without its wire `index`), with null, "" and [] as one empty value.
 */
function messageKey(message: ChatMessage): string {
  const empty = (value: unknown): unknown =>
    value === undefined || value === null || value === "" || (Array.isArray(value) && value.length === 0) ? null : value;
  const calls = empty(message.tool_calls);
  const projected = Array.isArray(calls)
    ? calls.map((call) => {
        const { index: _index, ...rest } = call as Record<string, unknown>;
        return canonical(rest);
      })
    : calls;
  return JSON.stringify([message.role, empty(message.content), empty(message.reasoning_content), projected]);
}

function canonical(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(canonical);
  if (value !== null && typeof value === "object") {
    return Object.fromEntries(
      Object.keys(value)
        .sort()
        .map((key) => [key, canonical((value as Record<string, unknown>)[key])]),
    );
  }
  return value;
}

interface Server {
  /** Positions a request (a refused one changes nothing). */
  call(request: string[], index: number): CallPrediction;
  /** Stores the generation of the request just accepted. */
  commit(request: string[], assistant: string, index: number, truncated: boolean): void;
}

/** v1: one line; a request that stops matching rolls back by at most one generated turn, more is a 400. */
class LinearModel implements Server {
  messages: string[] = [];
  ends: number[] = [];
  trajectory: number[] = [];

  call(request: string[], index: number): CallPrediction {
    let note = this.trajectory.length === 0 ? "starts the trajectory" : "extends the trajectory";
    if (this.trajectory.length > 0) {
      let matched = 0;
      while (matched < Math.min(this.messages.length, request.length) && this.messages[matched] === request[matched]) matched += 1;
      if (matched < this.messages.length) {
        let keep = 0;
        for (let i = this.ends.length - 1; i >= 0; i -= 1) {
          if (this.ends[i] <= matched) {
            keep = i + 1;
            break;
          }
        }
        const discarded = this.trajectory.length - keep;
        if (discarded > 1) {
          return { call: index, status: 400, note: `refused: diverges at message ${matched}, which would discard ${discarded} generated turns (v1 allows 1)` };
        }
        note = `rolls back ${discarded} generated turn${discarded === 1 ? "" : "s"} (diverges at message ${matched})`;
        this.messages = this.messages.slice(0, keep === 0 ? 0 : this.ends[keep - 1]);
        this.ends = this.ends.slice(0, keep);
        this.trajectory = this.trajectory.slice(0, keep);
      }
    }
    return { call: index, status: 200, note };
  }

  commit(request: string[], assistant: string, index: number): void {
    this.messages = [...this.messages, ...request.slice(this.messages.length), assistant];
    this.ends.push(request.length + 1);
    this.trajectory.push(index);
  }
}

interface ModelNode {
  id: number;
  parent: number | null;
  path: string[];
  truncated: boolean;
  call: number;
}

/** v2: every generation is a node under the deepest node whose whole path prefixes the request (newest on ties). */
class TreeModel implements Server {
  nodes: ModelNode[] = [];
  active: number | null = null;
  private pending: { parent: ModelNode | null; matched: number } | null = null;

  call(request: string[], index: number): CallPrediction {
    let best: ModelNode | null = null;
    for (const node of this.nodes) {
      if (node.path.length > request.length || !node.path.every((key, i) => key === request[i])) continue;
      if (best === null || node.path.length >= best.path.length) best = node;
    }
    if (best !== null && best.truncated) {
      return { call: index, status: 409, note: `refused: attaches at node ${best.id}, cut off by finish_reason "length"` };
    }
    this.pending = { parent: best, matched: best === null ? 0 : best.path.length };
    const siblings = best === null ? this.nodes.filter((n) => n.parent === null) : this.nodes.filter((n) => n.parent === best.id);
    const where = best === null ? (this.nodes.length === 0 ? "the first root" : "a new root") : `a child of node ${best.id}`;
    return {
      call: index,
      status: 200,
      note: `becomes node ${this.nodes.length}, ${where}${siblings.length > 0 ? ` (sibling of ${siblings.map((n) => n.id).join(", ")})` : ""}`,
    };
  }

  commit(request: string[], assistant: string, index: number, truncated: boolean): void {
    const pending = this.pending as { parent: ModelNode | null; matched: number };
    const id = this.nodes.length;
    const path = [...(pending.parent?.path ?? []), ...request.slice(pending.matched), assistant];
    this.nodes.push({ id, parent: pending.parent?.id ?? null, path, truncated, call: index });
    this.active = id;
  }

  pathOf(id: number): number[] {
    const out: number[] = [];
    for (let node: ModelNode | undefined = this.nodes[id]; node !== undefined; node = node.parent === null ? undefined : this.nodes[node.parent])
      out.unshift(node.id);
    return out;
  }

  tree(): TreePrediction {
    const leaves = this.nodes.filter((node) => !this.nodes.some((child) => child.parent === node.id));
    const kept = leaves
      .filter((leaf) => leaf.parent === null || !this.nodes.some((other) => other.parent === leaf.parent && other.id > leaf.id))
      .map((leaf) => ({ id: leaf.id, depth: this.pathOf(leaf.id).length }))
      .sort((a, b) => b.depth - a.depth || b.id - a.id)
      .map((leaf) => leaf.id);
    return {
      nodes: this.nodes.map((node) => [node.id, node.parent]),
      leaves: leaves.map((leaf) => [leaf.id, this.pathOf(leaf.id)]),
      nodeCalls: this.nodes.map((node) => node.call),
      kept,
    };
  }
}

function simulate(schedule: AgentSchedule, server: Server): CallPrediction[] {
  const calls = scheduleCalls(schedule);
  let history: HistoryEntry[] = initialHistory(schedule);
  const out: CallPrediction[] = [];
  calls.forEach((call, index) => {
    if (index > 0) history = applyAction(history, schedule.steps[index - 1].action);
    const request = historyMessages(history).map(messageKey);
    const prediction = server.call(request, index);
    out.push(prediction);
    if (prediction.status !== 200) return;
    const { message, finishReason } = predictedAssistantMessage(call);
    server.commit(request, messageKey(message), index, finishReason === "length");
    history = [...history, { message, generatedBy: index }];
  });
  return out;
}

/** Predicts both servers' behaviour for a schedule. Pure. */
export function predictSchedule(schedule: AgentSchedule): SchedulePrediction {
  const linear = new LinearModel();
  const v1Calls = simulate(schedule, linear);
  const tree = new TreeModel();
  const v2Calls = simulate(schedule, tree);
  const treePrediction = tree.tree();
  const v2Records = tree.active === null ? [] : tree.pathOf(tree.active).map((id) => treePrediction.nodeCalls[id]);
  const v1 = { calls: v1Calls, records: [...linear.trajectory] };
  const v2 = { calls: v2Calls, records: v2Records, tree: treePrediction };

  let agree = true;
  let why = "every call is accepted by both, v2 keeps one leaf and its path is v1's trajectory";
  const v1Refused = v1Calls.filter((c) => c.status !== 200).map((c) => c.call);
  const v2Refused = v2Calls.filter((c) => c.status !== 200).map((c) => c.call);
  if (v1Refused.length > 0 || v2Refused.length > 0) {
    agree = false;
    why = `refused calls differ from a clean run (v1 refuses ${JSON.stringify(v1Refused)}, v2 refuses ${JSON.stringify(v2Refused)})`;
  } else if (treePrediction.kept.length !== 1) {
    agree = false;
    why = `v2 keeps ${treePrediction.kept.length} leaves (${treePrediction.kept.join(", ")}), v1 has one trajectory`;
  } else {
    const keptCalls = tree.pathOf(treePrediction.kept[0]).map((id) => treePrediction.nodeCalls[id]);
    if (JSON.stringify(keptCalls) !== JSON.stringify(linear.trajectory)) {
      agree = false;
      why = `v2's kept leaf holds calls ${JSON.stringify(keptCalls)}, v1's trajectory holds ${JSON.stringify(linear.trajectory)}`;
    }
  }
  return { v1, v2, agree, why };
}
