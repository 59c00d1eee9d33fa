// Reduces a fixture run (records, v2 tree, first sample) to the plain data the HTML report draws.
// Pure and defensive: a run from a broken server still yields a view, with what could not be read left empty.
import { float64Hex } from "../matchers/float-bits";
import type { SessionParityRun } from "../fixture/types";
import type { ReportRecordView, ReportRunView, ReportSampleView, ReportTreeNode } from "./types";

type Loose = Record<string, unknown>;

function isLoose(value: unknown): value is Loose {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function stringOrNull(value: unknown): string | null {
  return typeof value === "string" ? value : null;
}

function firstChoice(response: unknown): Loose {
  if (!isLoose(response) || !Array.isArray(response.choices) || !isLoose(response.choices[0])) return {};
  return response.choices[0];
}

/** One stored record as the report shows it (prompt and completion sizes, response id, weight version). */
function recordView(record: unknown): ReportRecordView {
  const request = isLoose(record) && isLoose(record.request) ? record.request : {};
  const response = isLoose(record) ? record.response : undefined;
  const choice = firstChoice(response);
  const meta = isLoose(choice.meta_info) ? choice.meta_info : {};
  const logprobs = Array.isArray(meta.output_token_logprobs) ? meta.output_token_logprobs : [];
  return {
    responseId: isLoose(response) ? stringOrNull(response.id) : null,
    promptTokens: Array.isArray(request.input_ids) ? request.input_ids.length : 0,
    completionTokens: logprobs.length,
    weightVersion: stringOrNull(meta.weight_version),
    finishReason: stringOrNull(choice.finish_reason),
  };
}

/** The v2 tree of a session's metadata, with each node's weight version looked up by response id. */
function treeView(metadata: unknown, records: readonly ReportRecordView[]): ReportRunView["tree"] {
  const tree = isLoose(metadata) ? metadata.tree : undefined;
  if (!isLoose(tree) || !Array.isArray(tree.nodes) || !Array.isArray(tree.leaves)) return null;
  const versionByResponse = new Map(records.filter((r) => r.responseId !== null).map((r) => [r.responseId, r.weightVersion]));
  const nodes: ReportTreeNode[] = tree.nodes.filter(isLoose).map((node) => ({
    id: typeof node.id === "number" ? node.id : -1,
    parent: typeof node.parent === "number" ? node.parent : null,
    numTokens: typeof node.num_tokens === "number" ? node.num_tokens : 0,
    responseId: typeof node.response_id === "string" ? node.response_id : "",
    weightVersion: versionByResponse.get(typeof node.response_id === "string" ? node.response_id : "") ?? null,
  }));
  const leaves = tree.leaves.filter(isLoose).map((leaf) => ({
    nodeId: typeof leaf.node_id === "number" ? leaf.node_id : -1,
    path: Array.isArray(leaf.path_node_ids) ? leaf.path_node_ids.filter((id): id is number => typeof id === "number") : [],
  }));
  return { nodes, leaves };
}

function numberList(value: unknown): number[] {
  return Array.isArray(value) ? value.map((item) => (typeof item === "number" ? item : Number.NaN)) : [];
}

/** The sample's tokens, mask and log-prob bits; token texts come from `decodeToken` when given. */
export function sampleView(sample: unknown, decodeToken?: (id: number) => string): ReportSampleView | null {
  if (!isLoose(sample)) return null;
  const tokens = numberList(sample.tokens);
  const responseLength = typeof sample.response_length === "number" ? sample.response_length : 0;
  return {
    tokens,
    responseLength,
    lossMask: numberList(sample.loss_mask),
    logProbBits: numberList(sample.rollout_log_probs).map(float64Hex),
    tokenTexts: decodeToken === undefined ? null : tokens.map((id) => (Number.isInteger(id) && id >= 0 ? decodeToken(id) : "\uFFFD")),
  };
}

/** A whole run as the report draws it; an `Error` in place of a run becomes a view holding only its message. */
export function runView(run: SessionParityRun | Error, version: string, decodeToken?: (id: number) => string): ReportRunView {
  if (run instanceof Error) {
    return { version, sessionId: null, records: [], tree: null, keptLeaves: [], sample: null, sampleCount: 0, failure: run.message };
  }
  const records = Array.isArray(run.preCollect?.records) ? run.preCollect.records.map(recordView) : [];
  const keptLeaves = run.samples.flatMap((sample) => {
    const leaf = isLoose(sample.metadata) ? sample.metadata.leaf : undefined;
    return isLoose(leaf) && typeof leaf.node_id === "number" ? [leaf.node_id] : [];
  });
  const failure = run.failure ?? (run.emptyReason === null ? null : `empty: ${run.emptyReason}`);
  return {
    version,
    sessionId: typeof run.preCollect?.session_id === "string" ? run.preCollect.session_id : null,
    records,
    tree: treeView(run.preCollect?.metadata, records),
    keptLeaves,
    sample: run.samples.length > 0 ? sampleView(run.samples[0], decodeToken) : null,
    sampleCount: run.samples.length,
    failure,
  };
}
