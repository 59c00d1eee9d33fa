// miles' debug trajectory dump: one JSON line per sample that carries its conversation (`metadata.messages`).
// The rows are pure; the writer (the server's edge) puts each samples op's rows in the file its template names.
import { mkdirSync, writeFileSync, appendFileSync } from "node:fs";
import { dirname } from "node:path";
import { dumpsPy, type PyDumpsOptions } from "../wire/py-json";
import type { JsonValue, Sample } from "../wire/sample";

/** One dump row, keys in miles' order (`trajectory_rows`, miles/ray/rollout/debug_data.py at 31f1ca96). */
export interface TrajectoryRow {
  sample_index: number | null;
  group_index: number | null;
  status: string;
  reward: JsonValue;
  prompt: JsonValue;
  messages: JsonValue;
}

/**
 * The rows of `samples`: one per sample whose metadata holds `messages` (others are skipped), `reward` kept only when
 * a number or a boolean (Python's `isinstance(reward, (int, float))`, where a bool is an int), else null.
 */
export function trajectoryRows(samples: readonly Sample[]): TrajectoryRow[] {
  const rows: TrajectoryRow[] = [];
  for (const sample of samples) {
    const messages = sample.metadata?.messages;
    if (messages === undefined || messages === null) continue;
    const reward = sample.reward;
    rows.push({
      sample_index: sample.index,
      group_index: sample.group_index,
      status: sample.status,
      reward: typeof reward === "number" || typeof reward === "boolean" ? reward : null,
      prompt: sample.prompt,
      messages,
    });
  }
  return rows;
}

/** `json.dumps(row, separators=(",", ":"))`: ASCII escapes, compact separators, NaN spelled as Python does. */
const ROW_JSON: PyDumpsOptions = Object.freeze({ ensureAscii: true, compact: true, allowNan: true });

/** The file text of some rows: each row's JSON and a newline (empty for no rows). */
export function trajectoryRowsText(rows: readonly TrajectoryRow[]): string {
  let text = "";
  for (const row of rows) text += `${dumpsPy(row, ROW_JSON)}\n`;
  return text;
}

const PLACEHOLDER = /\{([^{}]*)\}/g;
const PLACEHOLDER_NAMES = new Set(["rollout_id", "session_id"]);

/**
 * Writes each samples op's rows (`--save-trajectories PATH_TEMPLATE`). `{rollout_id}` and `{session_id}` in the
 * template are the session's id (our unit of one rollout): that file is rewritten by each samples op of the session,
 * as miles rewrites a rollout's file. A template without a placeholder names one file every samples op appends to.
 * No rows, no file (miles: "no conversations: no file").
 */
export class TrajectoryDumpWriter {
  private readonly perSession: boolean;

  /** @throws Error naming a placeholder other than `{rollout_id}` / `{session_id}` (Python's `format` raises KeyError) */
  constructor(readonly pathTemplate: string) {
    let perSession = false;
    for (const match of pathTemplate.matchAll(PLACEHOLDER)) {
      if (!PLACEHOLDER_NAMES.has(match[1])) {
        throw new Error(`--save-trajectories ${JSON.stringify(pathTemplate)}: unknown placeholder {${match[1]}} (use {rollout_id} or {session_id})`);
      }
      perSession = true;
    }
    this.perSession = perSession;
  }

  /** The file of one session's rows. */
  pathFor(sessionId: string): string {
    return this.pathTemplate.replace(PLACEHOLDER, () => sessionId);
  }

  /** Writes the rows of one samples op's samples; returns the path written, or null when no sample had messages. */
  write(sessionId: string, samples: readonly Sample[]): string | null {
    const rows = trajectoryRows(samples);
    if (rows.length === 0) return null;
    const path = this.pathFor(sessionId);
    mkdirSync(dirname(path), { recursive: true });
    const text = trajectoryRowsText(rows);
    if (this.perSession) writeFileSync(path, text);
    else appendFileSync(path, text);
    return path;
  }
}
