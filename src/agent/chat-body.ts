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
 * conversation. The part after `messages` is serialized once. The messages of the last call are kept with their UTF-8
 * JSON: as long as this call's list starts with the same message objects (the agent appends and pops at the end), their
 * bytes are reused and only the messages after that prefix are serialized. A message the agent holds is never changed
 * after it is sent, and sampling and tools are read once, when the writer is made.
 *
 * The split is taken only when it provably spells the same bytes: the reference object of an empty conversation must
 * serialize as `{"messages":[]` and the rest, so `messages` comes first (no array-index key in the sampling sorts ahead
 * of it) and nothing overrides it. Otherwise every call serializes the whole object, as before.
 */
export class ChatBodyWriter {
  /** Bytes after the messages' elements (`],"tools":…}`), or null when the split does not hold. */
  private readonly tail: Uint8Array | null;
  /** The messages of the last call, and the JSON bytes of each. */
  private readonly sent: unknown[] = [];
  private readonly sentBytes: Uint8Array[] = [];

  constructor(
    private readonly tools: unknown,
    private readonly sampling: WireObject,
    private readonly stream: boolean,
  ) {
    const probe = JSON.stringify(chatRequestObject([], tools, sampling, stream));
    const usable = !Object.prototype.hasOwnProperty.call(sampling, "messages") && probe.startsWith(`${HEAD}]`);
    this.tail = usable ? Buffer.from(probe.slice(HEAD.length)) : null;
  }

  /** The request body for this call's conversation. */
  write(messages: readonly ChatMessage[]): Buffer {
    const tail = this.tail;
    if (tail === null) return Buffer.from(JSON.stringify(chatRequestObject(messages, this.tools, this.sampling, this.stream)));
    const { sent, sentBytes } = this;
    let kept = 0;
    while (kept < sent.length && kept < messages.length && sent[kept] === messages[kept]) kept++;
    sent.length = kept;
    sentBytes.length = kept;
    for (let i = kept; i < messages.length; i++) {
      sent.push(messages[i]);
      // an array element whose JSON is undefined is spelled null, as inside the whole object
      sentBytes.push(Buffer.from((JSON.stringify(messages[i]) as string | undefined) ?? "null"));
    }
    let length = HEAD_BYTES.length + tail.length + Math.max(0, sentBytes.length - 1);
    for (const part of sentBytes) length += part.length;
    const body = Buffer.allocUnsafe(length);
    body.set(HEAD_BYTES, 0);
    let at = HEAD_BYTES.length;
    for (let i = 0; i < sentBytes.length; i++) {
      if (i > 0) body[at++] = COMMA;
      body.set(sentBytes[i], at);
      at += sentBytes[i].length;
    }
    body.set(tail, at);
    return body;
  }
}
