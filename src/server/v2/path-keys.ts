// The render memo's exact keys of a v2 path's messages and tools, put together from parts kept per committed node and
// record: the mismatch report of a leaf that shares nodes with one already keyed serializes only its own deltas.
import type { KnownInputKeys } from "../../tokenizer/tito";
import { exactDataKeyAt } from "../../tokenizer/tito-prefix-cache";
import type { ToolSpec } from "../../tokenizer/types";
import type { TrajectoryNode } from "./forest";

/** Where the memo's inputs `[tag, messages, tools, kwargs]` hold the message list and the tools. */
const LIST_DEPTH = 1;
/** Where they hold each message. */
const MESSAGE_DEPTH = 2;

/** Per committed node: the keys of its delta messages joined by `,` ("" for none), null when one has no key. */
const deltaKeys = new WeakMap<TrajectoryNode, string | null>();
/** Per tools array of a committed record: its key, or null. */
const toolsKeys = new WeakMap<readonly ToolSpec[], string | null>();

/** The delta part of the path key of `node` (computed once: a committed node's messages never change). */
function deltaKey(node: TrajectoryNode): string | null {
  let key = deltaKeys.get(node);
  if (key !== undefined) return key;
  key = "";
  const delta = node.deltaMessages;
  for (let i = 0; i < delta.length; i++) {
    const part = exactDataKeyAt(delta[i], MESSAGE_DEPTH);
    if (part === undefined) {
      key = null;
      break;
    }
    key = i === 0 ? part : `${key},${part}`;
  }
  deltaKeys.set(node, key);
  return key;
}

/** `exactDataKeyAt(tools, 1)` of a committed record's tools, computed once per array. */
function toolsKey(tools: readonly ToolSpec[] | null): string | null {
  if (tools === null) return "null";
  let key = toolsKeys.get(tools);
  if (key === undefined) {
    key = exactDataKeyAt(tools, LIST_DEPTH) ?? null;
    toolsKeys.set(tools, key);
  }
  return key;
}

/**
 * The keys of `leaf.pathMessages()` and of `tools` (the leaf's record's, which never change) as the canonical render
 * memo would write them ({@link KnownInputKeys}): the messages' key is the path's delta parts in `[]`.
 */
export function pathInputKeys(leaf: TrajectoryNode, tools: readonly ToolSpec[] | null): KnownInputKeys {
  let messages = "";
  for (const node of leaf.pathNodes()) {
    const part = deltaKey(node);
    if (part === null) return { messages: null, tools: toolsKey(tools) };
    if (part !== "") messages = messages === "" ? part : `${messages},${part}`;
  }
  return { messages: `[${messages}]`, tools: toolsKey(tools) };
}
