// The v2 session as an append-only forest of generations, plus the search that places a new request in it.
// Pure data: no I/O, no tokenization, no locking; the serving policy builds on top of it.
import type { ChatMessage } from "../../tokenizer/types";
import type { MessageMatcher } from "../policy";
import type { SessionRecord } from "../types";
import { shareRecordIds } from "../record-ids";
import { TokenRun } from "../token-run";

/** Most nodes one session may hold; committing one more is refused. */
export const MAX_TREE_NODES = 1024;

/** Raised when a commit would grow a session past its node cap. */
export class ForestCapacityError extends Error {
  constructor(readonly cap: number) {
    // Python's text (miles/rollout/session/v2/tree_trajectory.py, SessionTree.create_node).
    super(
      `node cap reached (${cap}): the session cannot branch or extend further \u2014 this almost always means the harness ` +
        `is not replaying history verbatim`,
    );
    this.name = "ForestCapacityError";
  }
}

/** What a commit supplies to create one node. */
export interface NodeInit {
  /** Request messages beyond the parent's path, followed by the generated assistant message. */
  deltaMessages: readonly ChatMessage[];
  /** Full token snapshot root -> this node (prompt + completion). */
  tokenIds: readonly number[];
  /** This node's sampled completion inside `tokenIds`: `[promptLen, totalLen)`. */
  completionSpan: readonly [number, number];
  /** Wall-clock commit time in seconds since the epoch; informational only, never used for ordering. */
  committedAt: number;
  /** Upstream `response.id` (the key that joins an agent branch with its leaf). */
  responseId: string;
  /** The session record of this generation. */
  record: SessionRecord;
  /** Upstream finish reason ("" when absent). */
  finishReason: string;
}

/** One committed generation. `id` is its commit order inside the session (also called `seq`). */
export class TrajectoryNode {
  /** Children in commit order. */
  readonly children: TrajectoryNode[] = [];
  /** Number of nodes root -> this node (inclusive). */
  readonly depth: number;
  /** Number of messages on the root -> this node path (inclusive of this delta). */
  readonly messageEnd: number;
  readonly deltaMessages: readonly ChatMessage[];
  /** The snapshot root -> this node, sharing its parent's prefix (each id stored once per session and branch point). */
  readonly run: TokenRun;
  /** The snapshot as an array while this node is the newest of its forest (see {@link release}); null after. */
  private ids: readonly number[] | null;
  readonly completionSpan: readonly [number, number];
  readonly committedAt: number;
  readonly responseId: string;
  readonly record: SessionRecord;
  readonly finishReason: string;

  /** @param adopt the node keeps `init`'s message and id arrays instead of copying them (their maker never touches them again) */
  constructor(
    readonly id: number,
    readonly parent: TrajectoryNode | null,
    init: NodeInit,
    adopt = false,
  ) {
    this.deltaMessages = adopt ? init.deltaMessages : [...init.deltaMessages];
    this.ids = adopt ? init.tokenIds : init.tokenIds.slice(); // slice sizes the copy exactly (a spread leaves growth slack)
    this.run = TokenRun.of(this.ids, parent === null ? null : parent.run, true);
    this.completionSpan = [init.completionSpan[0], init.completionSpan[1]];
    this.committedAt = init.committedAt;
    this.responseId = init.responseId;
    this.record = init.record;
    this.finishReason = init.finishReason;
    this.depth = parent === null ? 1 : parent.depth + 1;
    this.messageEnd = (parent === null ? 0 : parent.messageEnd) + this.deltaMessages.length;
  }

  /**
   * Full token snapshot root -> this node (prompt + completion). The newest node of a forest keeps it as an array (the
   * same array on every read); an older one makes a fresh, equal array from its run on each read.
   */
  get tokenIds(): readonly number[] {
    return this.ids ?? this.run.toArray();
  }

  /** Number of ids in {@link tokenIds}, without making the array. */
  get tokenCount(): number {
    return this.run.length;
  }

  /**
   * Drops the array this node kept while it was the newest: from now on its snapshot and its record's prompt ids are
   * read from the shared runs (see record-ids.ts).
   */
  release(): void {
    if (this.ids === null) return;
    this.ids = null;
    shareRecordIds(this.record, this.run.prefix(this.completionSpan[0]));
  }

  /** Commit order; the only ordering key of the forest. Same value as `id`. */
  get seq(): number {
    return this.id;
  }

  /** A generation that stopped at the length limit; its path can never be extended. */
  get truncated(): boolean {
    return this.finishReason === "length";
  }

  /** Nodes root -> this node. */
  pathNodes(): TrajectoryNode[] {
    const nodes = new Array<TrajectoryNode>(this.depth);
    // eslint-disable-next-line @typescript-eslint/no-this-alias -- a cursor walking up the parent chain from this node
    let node: TrajectoryNode | null = this;
    for (let i = this.depth - 1; node !== null; i -= 1, node = node.parent) nodes[i] = node;
    return nodes;
  }

  /** Ids of the nodes root -> this node. */
  pathIds(): number[] {
    return this.pathNodes().map((node) => node.id);
  }

  /** All messages root -> this node, in order. */
  pathMessages(): ChatMessage[] {
    const messages: ChatMessage[] = [];
    for (const node of this.pathNodes()) messages.push(...node.deltaMessages);
    return messages;
  }
}

/** Where a request lands in the forest. */
export interface AttachPoint {
  /** The node the request extends, or null for a new root. */
  node: TrajectoryNode | null;
  /** Request messages covered by the attach node's path (0 for a new root). */
  matchedMessages: number;
  /** Diagnostics: the longest request prefix seen matching, partial deltas included. */
  bestOverlap: number;
}

/** The forest of one v2 session: roots and nodes in commit order, append-only. */
export class TrajectoryForest {
  /** Every node, in commit order (`nodes[i].id === i`). */
  readonly nodes: TrajectoryNode[] = [];
  /** Root nodes, in commit order. */
  readonly roots: TrajectoryNode[] = [];

  /** @param cap most nodes this forest accepts (default {@link MAX_TREE_NODES}). */
  constructor(readonly cap: number = MAX_TREE_NODES) {}

  /** Whether one more node can be committed. */
  get full(): boolean {
    return this.nodes.length >= this.cap;
  }

  /** Nodes without children, in commit order. */
  leaves(): TrajectoryNode[] {
    return this.nodes.filter((node) => node.children.length === 0);
  }

  /**
   * Appends a node under `parent` (null: a new root) and returns it. Its id is the next commit number. The node
   * copies `init.deltaMessages` and `init.tokenIds`, unless `adopt` says the caller hands those arrays over (made for
   * this node, exactly sized, never changed afterwards).
   * @throws ForestCapacityError when the forest already holds `cap` nodes.
   */
  createNode(parent: TrajectoryNode | null, init: NodeInit, adopt = false): TrajectoryNode {
    if (this.full) throw new ForestCapacityError(this.cap);
    if (parent !== null && this.nodes[parent.id] !== parent) {
      throw new Error(`createNode: parent node ${parent.id} does not belong to this forest`);
    }
    const node = new TrajectoryNode(this.nodes.length, parent, init, adopt);
    this.nodes.at(-1)?.release();
    this.nodes.push(node);
    if (parent === null) this.roots.push(node);
    else parent.children.push(node);
    return node;
  }

  /**
   * The deepest node whose whole root -> node path is a message-by-message prefix of `request`.
   * A node whose delta is only partly matched is no candidate (nor is anything below it); when two
   * candidates cover the same number of messages the higher commit number wins. Never mutates.
   * `mismatches`, when given, receives every pair `matches` refused, as `[stored, incoming]`: the search under any
   * wider matcher differs from this one only when it accepts one of them.
   */
  findAttachPoint(request: readonly ChatMessage[], matches: MessageMatcher, mismatches?: Array<[ChatMessage, ChatMessage]>): AttachPoint {
    let best: TrajectoryNode | null = null;
    let bestMatched = -1;
    let bestOverlap = 0;
    // Iterative depth-first walk: paths can be up to `cap` nodes deep.
    const stack: Array<[TrajectoryNode, number]> = [];
    for (let i = this.roots.length - 1; i >= 0; i -= 1) stack.push([this.roots[i], 0]);
    while (stack.length > 0) {
      const [node, offset] = stack.pop() as [TrajectoryNode, number];
      const delta = node.deltaMessages;
      let i = 0;
      while (i < delta.length && offset + i < request.length) {
        if (!matches(delta[i], request[offset + i])) {
          mismatches?.push([delta[i], request[offset + i]]);
          break;
        }
        i += 1;
      }
      if (offset + i > bestOverlap) bestOverlap = offset + i;
      if (i < delta.length) continue;
      const matched = offset + delta.length;
      if (matched > bestMatched || (matched === bestMatched && best !== null && node.id > best.id)) {
        best = node;
        bestMatched = matched;
      }
      for (let c = node.children.length - 1; c >= 0; c -= 1) stack.push([node.children[c], matched]);
    }
    return best === null ? { node: null, matchedMessages: 0, bestOverlap } : { node: best, matchedMessages: bestMatched, bestOverlap };
  }
}
