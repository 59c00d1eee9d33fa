// The weather agent's chat request bodies built from JSON kept per message: a turn serializes only its new messages.
// The bytes are those of JSON.stringify over the whole request object, the spelling the agent always sent.
import type { ChatMessage } from "../tokenizer/types";
import type { WireObject } from "./sse";

const HEAD = '{"messages":[';
const HEAD_BYTES = Buffer.from(HEAD);
const COMMA = 0x2c;

/**
 * The request object the agent sends on every chat call: `messages`, `tools`, the sampling parameters, then
 * `stream: true` when streaming (the reference spelling: its `JSON.stringify` is what goes on the wire).
 */
function chatRequestObject(messages: readonly ChatMessage[], tools: unknown, sampling: WireObject, stream: boolean): WireObject {
  const body: WireObject = { messages, tools, ...sampling };
  return stream ? { ...body, stream: true } : body;
}

/**
 * Writes the bytes of `JSON.stringify(chatRequestObject(messages, tools, sampling, stream))` for each call of one
 * conversation. The part after `messages` is serialized once. The last call's messages stay spelled, in order, in one
 * private buffer: as long as this call's list starts with the same message objects (the agent appends and pops at the
 * end), that much of the buffer is reused, only the messages after it are serialized (over the stale bytes of popped
 * ones), and the body is a fresh copy of the buffer's kept part and the tail. A message the agent holds is never
 * changed after it is sent, and sampling and tools are read once, when the writer is made.
 *
 * The split is taken only when it provably spells the same bytes: the reference object of an empty conversation must
 * serialize as `{"messages":[]` and the rest, so `messages` comes first (no array-index key in the sampling sorts ahead
 * of it) and nothing overrides it. Otherwise every call serializes the whole object, as before.
 */
export class ChatBodyWriter {
  /** Bytes after the messages' elements (`],"tools":…}`), or null when the split does not hold. */
  private readonly tail: Uint8Array | null;
  /** The messages of the last call. */
  private readonly sent: unknown[] = [];
  /** `{"messages":[` and the last call's messages spelled after it, comma-separated; never handed out (bodies copy it). */
  private prefix: Buffer = Buffer.allocUnsafe(4096);
  /** Where each sent message's bytes end in {@link prefix}. */
  private readonly ends: number[] = [];

  constructor(
    private readonly tools: unknown,
    private readonly sampling: WireObject,
    private readonly stream: boolean,
  ) {
    const probe = JSON.stringify(chatRequestObject([], tools, sampling, stream));
    const usable = !Object.prototype.hasOwnProperty.call(sampling, "messages") && probe.startsWith(`${HEAD}]`);
    this.tail = usable ? Buffer.from(probe.slice(HEAD.length)) : null;
    this.prefix.set(HEAD_BYTES, 0);
  }

  /** The request body for this call's conversation. */
  write(messages: readonly ChatMessage[]): Buffer {
    const tail = this.tail;
    if (tail === null) return Buffer.from(JSON.stringify(chatRequestObject(messages, this.tools, this.sampling, this.stream)));
    const { sent, ends } = this;
    let kept = 0;
    while (kept < sent.length && kept < messages.length && sent[kept] === messages[kept]) kept++;
    if (kept < sent.length) {
      sent.length = kept;
      ends.length = kept;
    }
    let at = kept === 0 ? HEAD_BYTES.length : ends[kept - 1];
    for (let i = kept; i < messages.length; i++) {
      // an array element whose JSON is undefined is spelled null, as inside the whole object
      const json = (JSON.stringify(messages[i]) as string | undefined) ?? "null";
      // room for a comma and the UTF-8 of every UTF-16 unit at 3 bytes (JSON.stringify leaves no lone surrogate)
      this.reserve(at, 1 + json.length * 3);
      if (i > 0) this.prefix[at++] = COMMA;
      at += this.prefix.write(json, at, "utf8");
      sent.push(messages[i]);
      ends.push(at);
    }
    const body = Buffer.allocUnsafe(at + tail.length);
    body.set(this.prefix.subarray(0, at), 0);
    body.set(tail, at);
    return body;
  }

  /** Grows {@link prefix} (keeping its first `used` bytes) so that `more` bytes fit after them. */
  private reserve(used: number, more: number): void {
    if (used + more <= this.prefix.length) return;
    const grown = Buffer.allocUnsafe(Math.max(used + more, this.prefix.length * 2));
    grown.set(this.prefix.subarray(0, used), 0);
    this.prefix = grown;
  }
}
