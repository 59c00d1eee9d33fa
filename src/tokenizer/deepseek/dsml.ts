// What DeepSeek V3.2's and V4's official encoders share: their marker strings, Python's json.dumps as they call it, the
// DSML spelling of a tool call's arguments, and Python's truthiness and str() where the encoders lean on them.
import { ChatTemplateError } from "../chat-template-error";
import { dumpsPy, parsePyJson, PY_KEY_ORDER, PY_TOJSON, pyNumberValue, pyObjectKeys, pyStr, pyTypeName, rememberKeyOrder } from "../../wire/py-json";

/** One message as the encoders read it: any keys, read with `msg.get(key)`. */
export type EncoderMessage = Record<string, unknown>;

export const BOS_TOKEN = "<｜begin▁of▁sentence｜>";
export const EOS_TOKEN = "<｜end▁of▁sentence｜>";
export const THINK_OPEN = "<think>";
export const THINK_CLOSE = "</think>";
export const DSML = "｜DSML｜";
export const USER_TOKEN = "<｜User｜>";
export const ASSISTANT_TOKEN = "<｜Assistant｜>";

/** The encoders' `to_json`: `json.dumps(value, ensure_ascii=False)` (default separators, keys in their order). */
export function toJson(value: unknown): string {
  return dumpsPy(value === undefined ? null : value, PY_TOJSON);
}

/** Python's truth value of a JSON-like value (`None`, `False`, `0`, `""`, `[]`, `{}` are false). */
export function pyTruthy(value: unknown): boolean {
  if (value === null || value === undefined || value === false || value === 0 || value === "") return false;
  if (Array.isArray(value)) return value.length > 0;
  const number = pyNumberValue(value);
  if (number !== undefined) return number !== 0;
  if (typeof value === "object") return Object.keys(value).length > 0;
  return true;
}

/** `str.format` of a value: a string as is, `None` for a missing one, Python's repr-like str otherwise. */
export function formatValue(value: unknown): string {
  return value === undefined ? "None" : pyStr(value);
}

/** `msg.get(key)` as Python reads it (a missing key is None). */
export function get(message: unknown, key: string): unknown {
  if (message === null || typeof message !== "object" || Array.isArray(message)) return undefined;
  return Object.prototype.hasOwnProperty.call(message, key) ? (message as Record<string, unknown>)[key] : undefined;
}

/** `json.loads(text)`, with Python's message shape on failure. @throws ChatTemplateError */
export function jsonLoads(text: string): unknown {
  try {
    return parsePyJson(text);
  } catch (error) {
    throw new ChatTemplateError(`json.loads failed on tool-call arguments: ${(error as Error).message}`);
  }
}

/** True for a JSON object (a Python dict). */
export function isDict(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value) && pyTypeName(value) === "dict";
}

/**
 * The DSML parameter lines of one call's arguments (`encode_arguments_to_dsml`): per key, in Python's order,
 * `<｜DSML｜parameter name="K" string="true|false">V</｜DSML｜parameter>` with a string value as is and any other
 * value as {@link toJson}; lines joined by a newline.
 */
export function dsmlParameters(args: Record<string, unknown>): string {
  const lines: string[] = [];
  for (const key of pyObjectKeys(args)) {
    const value = args[key];
    const isString = typeof value === "string";
    lines.push(`<${DSML}parameter name="${key}" string="${isString ? "true" : "false"}">${isString ? value : toJson(value)}</${DSML}parameter>`);
  }
  return lines.join("\n");
}

/** One invoke block: `<｜DSML｜invoke name="N">\nPARAMS\n</｜DSML｜invoke>`. */
export function dsmlInvoke(name: unknown, parameters: string): string {
  return `<${DSML}invoke name="${formatValue(name)}">\n${parameters}\n</${DSML}invoke>`;
}

/** The tool-call block: `\n\n<｜DSML｜BLOCK>\nINVOKES\n</｜DSML｜BLOCK>` (V3.2: `function_calls`, V4: `tool_calls`). */
export function dsmlBlock(block: string, invokes: readonly string[]): string {
  return `\n\n<${DSML}${block}>\n${invokes.join("\n")}\n</${DSML}${block}>`;
}

/** `{name, arguments}` of each OpenAI tool call (`tool_calls_from_openai_format`). @throws ChatTemplateError on a call without `function` */
export function callsOf(toolCalls: readonly unknown[]): { name: unknown; arguments: unknown }[] {
  return toolCalls.map((call, index) => {
    const fn = get(call, "function");
    if (!isDict(fn)) throw new ChatTemplateError(`tool_calls[${index}] has no function object (KeyError: 'function')`);
    return { name: get(fn, "name"), arguments: get(fn, "arguments") };
  });
}

/** The index of the last `user` or `developer` message, or -1 (`find_last_user_index`). */
export function lastUserIndex(messages: readonly EncoderMessage[]): number {
  for (let i = messages.length - 1; i >= 0; i--) {
    const role = get(messages[i], "role");
    if (role === "user" || role === "developer") return i;
  }
  return -1;
}

/** `messages[i]` with Python's negative indexing. */
export function at<T>(items: readonly T[], index: number): T | undefined {
  return index < 0 ? items[items.length + index] : items[index];
}

/** `copy.deepcopy` of JSON-like data: arrays and plain objects copied (with their Python key order), numbers kept. */
export function deepCopy<T>(value: T): T {
  if (value === null || typeof value !== "object" || pyNumberValue(value) !== undefined) return value;
  if (Array.isArray(value)) return value.map((item: unknown) => deepCopy(item)) as T;
  const copy: Record<string, unknown> = {};
  for (const key of Object.keys(value)) {
    const item = deepCopy((value as Record<string, unknown>)[key]);
    if (key === "__proto__") Object.defineProperty(copy, key, { value: item, writable: true, enumerable: true, configurable: true });
    else copy[key] = item;
  }
  const order = (value as { [PY_KEY_ORDER]?: readonly string[] })[PY_KEY_ORDER];
  if (order !== undefined)
    rememberKeyOrder(
      copy,
      order.filter((key) => Object.prototype.hasOwnProperty.call(copy, key)),
    );
  return copy as T;
}

/** True when `a` and `b` are the same JSON-like data, dict keys in the same (Python) order. */
export function sameData(a: unknown, b: unknown): boolean {
  if (a === b) return typeof a !== "number" || Object.is(a, b); // 0 and -0 are an int and a float to Python
  if (a === null || b === null || typeof a !== "object" || typeof b !== "object") return false;
  const an = pyNumberValue(a);
  if (an !== undefined || pyNumberValue(b) !== undefined) return pyTypeName(a) === pyTypeName(b) && Object.is(an, pyNumberValue(b));
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!sameData(a[i], b[i])) return false;
    return true;
  }
  const keys = pyObjectKeys(a);
  const other = pyObjectKeys(b);
  if (keys.length !== other.length) return false;
  for (let i = 0; i < keys.length; i++) {
    if (keys[i] !== other[i] || !sameData((a as Record<string, unknown>)[keys[i]], (b as Record<string, unknown>)[keys[i]])) return false;
  }
  return true;
}
