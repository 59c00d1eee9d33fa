// Names for the messages and tools of a v2 path's canonical render, so the render memo keys a leaf's mismatch report by
// a short list of ids instead of serializing the whole path: each committed node's delta is serialized once, ever.
import { heapScaledBound } from "../../tokenizer/heap-scaled";
import { exactDataKeyAt } from "../../tokenizer/tito-prefix-cache";
import type { ToolSpec } from "../../tokenizer/types";
import type { TrajectoryNode } from "./forest";

/** Where the memo's inputs `[tag, messages, tools, kwargs]` hold the tools (and where a delta's list would sit). */
const LIST_DEPTH = 1;

/** Default bound of the interned texts, in characters, less on a small heap (ids outlive a reset; see {@link TextIds}). */
const DEFAULT_INTERNED_CHARS = 1_000_000;

/**
 * Numbers exact key texts: equal texts get the same id while the text is held, and an id is never given to another
 * text. Past `maxChars` of held texts it forgets them all; a text seen again then gets a fresh id (a memo miss,
 * never two texts under one id).
 */
export class TextIds {
  /** Starts every name built from these ids: names of two numberings (two copies of this module) never meet. */
  readonly token = Math.random().toString(36).slice(2);
  private readonly ids = new Map<string, number>();
  private chars = 0;
  private next = 0;

  /** @param maxChars bound on the characters of the texts held */
  constructor(readonly maxChars: number = heapScaledBound(DEFAULT_INTERNED_CHARS, 2)) {}

  /** The id of `text`. */
  idOf(text: string): number {
    let id = this.ids.get(text);
    if (id === undefined) {
      if (this.chars + text.length > this.maxChars) {
        this.ids.clear();
        this.chars = 0;
      }
      id = this.next++;
      this.ids.set(text, id);
      this.chars += text.length;
    }
    return id;
  }
}

const texts = new TextIds();
/** Per committed node: the id of its delta's exact key (at the message list's depth), null when it has none. */
const deltaIds = new WeakMap<TrajectoryNode, number | null>();
/** Per tools array of a committed record: the id of its exact key, or null. */
const toolsIds = new WeakMap<readonly ToolSpec[], number | null>();

/** The id of `node`'s delta messages (computed once: a committed node's messages never change). */
function deltaId(node: TrajectoryNode): number | null {
  let id = deltaIds.get(node);
  if (id === undefined) {
    const key = exactDataKeyAt(node.deltaMessages, LIST_DEPTH);
    id = key === undefined ? null : texts.idOf(key);
    deltaIds.set(node, id);
  }
  return id;
}

/** The id of a committed record's tools (null: none; the key of `null` then). */
function toolsId(tools: readonly ToolSpec[] | null): number | null {
  if (tools === null) return texts.idOf("null");
  let id = toolsIds.get(tools);
  if (id === undefined) {
    const key = exactDataKeyAt(tools, LIST_DEPTH);
    id = key === undefined ? null : texts.idOf(key);
    toolsIds.set(tools, id);
  }
  return id;
}

/**
 * The name of `leaf.pathMessages()` with `tools` (the leaf record's, which never change) for the canonical render
 * memo: the numbering's token, the tools' id, then each path node's delta id. Equal names mean equal tools and equal
 * deltas, hence equal path messages, as exactDataKey tells data apart. Null when the tools or a delta have no exact key.
 */
export function pathInputsName(leaf: TrajectoryNode, tools: readonly ToolSpec[] | null): string | null {
  const first = toolsId(tools);
  if (first === null) return null;
  let name = `${texts.token}:${first}`;
  for (const node of leaf.pathNodes()) {
    const id = deltaId(node);
    if (id === null) return null;
    name += `,${id}`;
  }
  return name;
}
