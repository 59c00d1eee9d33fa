// Data shapes of the HTML parity report: what one run and one v1/v2 pair look like once reduced for drawing.
// Plain JSON-safe data, so a Jest worker can record it and the reporter in the main process can draw it later.

/** One record of a run's active path, reduced to what the report draws. */
export interface ReportRecordView {
  /** `response.id` of the upstream reply, or null. */
  responseId: string | null;
  /** Prompt tokens sent upstream (`input_ids`). */
  promptTokens: number;
  /** Completion tokens returned. */
  completionTokens: number;
  /** `meta_info.weight_version` of the reply, or null. */
  weightVersion: string | null;
  /** `choices[0].finish_reason`, or null. */
  finishReason: string | null;
}

/** One node of a v2 retry tree as the report draws it. */
export interface ReportTreeNode {
  /** Node id (commit order). */
  id: number;
  /** Parent node id, null for a root. */
  parent: number | null;
  /** Tokens the node holds. */
  numTokens: number;
  /** `response_id` of the node's generation. */
  responseId: string;
  /** Weight version of the generation, when a record on the active path names it. */
  weightVersion: string | null;
}

/** The training sample of a run, as token rows for the aligned view. */
export interface ReportSampleView {
  /** Token ids of the whole sample (prompt + response). */
  tokens: number[];
  /** `response_length`: how many trailing tokens `loss_mask` and the log-probs cover. */
  responseLength: number;
  /** `loss_mask` over the response tokens (empty when absent). */
  lossMask: number[];
  /** `rollout_log_probs` over the response tokens as float64 bit patterns (16 hex digits), so `-0` survives JSON. */
  logProbBits: string[];
  /** Decoded text of every token, when the report was given a tokenizer (null otherwise). */
  tokenTexts: string[] | null;
}

/** One trajectory through one session-server version. */
export interface ReportRunView {
  /** `v1` or `v2`. */
  version: string;
  /** Session id, when the run created one. */
  sessionId: string | null;
  /** Records of the active path right before the collect, in order. */
  records: ReportRecordView[];
  /** The v2 retry tree (`metadata.tree`), null for v1 or when absent. */
  tree: { nodes: ReportTreeNode[]; leaves: { nodeId: number; path: number[] }[] } | null;
  /** Leaf node ids the kept samples came from (v2). */
  keptLeaves: number[];
  /** The first training sample, or null when the run produced none. */
  sample: ReportSampleView | null;
  /** Samples the run produced. */
  sampleCount: number;
  /** Why the run failed or came back empty, when it did. */
  failure: string | null;
}

/** One failing part of a check, with the text the matchers print for it. */
export interface ReportFailureView {
  /** Which part failed (`samples[0]`, `tree.nodes`, ...). */
  part: string;
  /** The matcher's text for the part: headline and differing leaves. */
  text: string;
  /** Paths of the differing leaves (e.g. `samples[0].tokens[17]`). */
  paths: string[];
}

/** One v1/v2 pair (or one matcher call) of the report. */
export interface ReportPairView {
  /** Heading of the pair: `trajectory 3`, or the test's full name for the Jest reporter. */
  title: string;
  /** Where it comes from (test file and name), when known. */
  origin: string | null;
  /** True when every check of the pair passed. */
  pass: boolean;
  /** The v1 run, when there is one. */
  v1: ReportRunView | null;
  /** The v2 run, when there is one. */
  v2: ReportRunView | null;
  /** The failing parts of every check, in check order. */
  failures: ReportFailureView[];
}

/** Everything one HTML report shows. */
export interface HtmlReportInput {
  /** Page title. */
  title: string;
  /** When the report was made (ISO 8601). */
  generatedAt: string;
  /** Summary lines (label, value), shown as a table at the top. */
  summary: [string, string][];
  /** The pairs, in order. */
  pairs: ReportPairView[];
}
