// Builders for pure v2 tests: grow forests with synthetic token ids and raw leaf samples shaped like assembly output.
// They stand in for the HTTP path when a test only exercises forest, picker or post-processor logic.
import type { ChatMessage } from "../../../../src/tokenizer/types";
import type { SessionRecord } from "../../../../src/server/types";
import { Sample } from "../../../../src/wire/sample";
import { TrajectoryForest, type TrajectoryNode } from "../../../../src/server/v2/forest";
import { buildTreeMetadata, leafDescriptor, type V2SessionMetadata } from "../../../../src/server/v2/tree-metadata";

/** A record stub; pure tests never assemble from it. */
export function stubRecord(id: number): SessionRecord {
  return {
    timestamp: id,
    request_timestamp: id,
    method: "POST",
    path: "/v1/chat/completions",
    request: {},
    response: { id: `resp-${id}` },
    status_code: 200,
  };
}

/** Grows legal forests: every node's snapshot extends its parent's with fresh, globally unique ids. */
export class Grower {
  private nextToken = 1;
  constructor(readonly forest: TrajectoryForest = new TrajectoryForest()) {}

  grow(
    parent: TrajectoryNode | null,
    options: { env?: number; completion?: number; finishReason?: string; committedAt?: number; delta?: ChatMessage[] } = {},
  ): TrajectoryNode {
    const env = options.env ?? 1;
    const completion = options.completion ?? 1;
    const prompt = [...(parent === null ? [] : parent.tokenIds), ...this.fresh(env)];
    const tokens = [...prompt, ...this.fresh(completion)];
    const id = this.forest.nodes.length;
    return this.forest.createNode(parent, {
      deltaMessages: options.delta ?? [{ role: "assistant", content: `a${id}` }],
      tokenIds: tokens,
      completionSpan: [prompt.length, tokens.length],
      committedAt: options.committedAt ?? id,
      responseId: `resp-${id}`,
      record: stubRecord(id),
      finishReason: options.finishReason ?? "stop",
    });
  }

  private fresh(n: number): number[] {
    const ids = Array.from({ length: n }, (_, i) => this.nextToken + i);
    this.nextToken += n;
    return ids;
  }
}

/**
 * A raw leaf sample as the shared assembly produces it for a clean path: the response window starts at
 * the root's completion; loss mask 1 over completions, 0 over observations.
 */
export function rawLeafSample(leaf: TrajectoryNode): Sample {
  const path = leaf.pathNodes();
  const start = path[0].completionSpan[0];
  const mask: number[] = [];
  for (let p = start; p < leaf.tokenIds.length; p += 1) {
    mask.push(path.some((node) => p >= node.completionSpan[0] && p < node.completionSpan[1]) ? 1 : 0);
  }
  return new Sample({
    tokens: [...leaf.tokenIds],
    response_length: mask.length,
    loss_mask: mask,
    rollout_log_probs: mask.map(() => 0),
    status: "completed",
    metadata: { accumulated_token_ids: [...leaf.tokenIds], leaf: leafDescriptor(leaf) },
  });
}

/** Session metadata as the samples op hands it to the hooks. */
export function sessionMetadataOf(forest: TrajectoryForest, agent?: V2SessionMetadata["agent"]): V2SessionMetadata {
  const metadata: V2SessionMetadata = { accumulated_token_ids: [], max_trim_tokens: 0, tree: buildTreeMetadata(forest) };
  if (agent !== undefined) metadata.agent = agent;
  return metadata;
}

/** A logger that keeps what it was told. */
export function recordingLogger(): { warn(message: string): void; messages: string[] } {
  const messages: string[] = [];
  return { messages, warn: (message: string) => void messages.push(message) };
}
