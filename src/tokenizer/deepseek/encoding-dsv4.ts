// DeepSeek V4's prompt encoder in TypeScript: the behaviour of SGLang's `encoding_dsv4.encode_messages` (tool results
// folded into user blocks, DSML `tool_calls`, reasoning effort, task tokens), written anew. V4 ships no Jinja template.
import {
  ASSISTANT_TOKEN,
  BOS_TOKEN,
  callsOf,
  deepCopy,
  dsmlBlock,
  dsmlInvoke,
  dsmlParameters,
  DSML,
  EOS_TOKEN,
  formatValue,
  get,
  isDict,
  lastUserIndex,
  pyTruthy,
  THINK_CLOSE,
  THINK_OPEN,
  toJson,
  USER_TOKEN,
  type EncoderMessage,
} from "./dsml";
import { DeepSeekEncodingError, type EncodeOptions } from "./encoding-dsv32";
import { parsePyJson, pyTypeName } from "../../wire/py-json";

/** `encode_messages`' keyword arguments for V4: V3.2's plus the reasoning effort. */
export interface EncodeOptionsV4 extends EncodeOptions {
  reasoningEffort?: unknown;
}

const LATEST_REMINDER_TOKEN = "<｜latest_reminder｜>";
const TASK_TOKENS: Readonly<Record<string, string>> = {
  action: "<｜action｜>",
  query: "<｜query｜>",
  authority: "<｜authority｜>",
  domain: "<｜domain｜>",
  title: "<｜title｜>",
  read_url: "<｜read_url｜>",
};
const RESPONSE_FORMAT_PREFIX = "## Response Format:\n\nYou MUST strictly adhere to the following schema to reply:\n";
const REASONING_EFFORT_MAX =
  "Reasoning Effort: Absolute maximum with no shortcuts permitted.\n" +
  "You MUST be very thorough in your thinking and comprehensively decompose the problem to resolve the root cause, rigorously stress-testing your logic against all potential paths, edge cases, and adversarial scenarios.\n" +
  "Explicitly write out your entire deliberation process, documenting every intermediate step, considered alternative, and rejected hypothesis to ensure absolutely no assumption is left unchecked.\n\n";

/** The tools section (`render_tools` over V4's `TOOLS_TEMPLATE`). */
function renderTools(tools: readonly unknown[]): string {
  const schemas = tools.map((tool) => toJson(get(tool, "function"))).join("\n");
  return (
    "## Tools\n\n" +
    `You have access to a set of tools to help answer the user's question. You can invoke tools by writing a "<${DSML}tool_calls>" block like the following:\n\n` +
    `<${DSML}tool_calls>\n` +
    `<${DSML}invoke name="$TOOL_NAME">\n` +
    `<${DSML}parameter name="$PARAMETER_NAME" string="true|false">$PARAMETER_VALUE</${DSML}parameter>\n` +
    "...\n" +
    `</${DSML}invoke>\n` +
    `<${DSML}invoke name="$TOOL_NAME2">\n` +
    "...\n" +
    `</${DSML}invoke>\n` +
    `</${DSML}tool_calls>\n\n` +
    'String parameters should be specified as is and set `string="true"`. For all other types (numbers, booleans, arrays, objects), pass the value in JSON format and set `string="false"`.\n\n' +
    `If thinking_mode is enabled (triggered by ${THINK_OPEN}), you MUST output your complete reasoning inside ${THINK_OPEN}...${THINK_CLOSE} BEFORE any tool calls or final response.\n\n` +
    `Otherwise, output directly after ${THINK_CLOSE} with tool calls or final response.\n\n` +
    "### Available Tool Schemas\n\n" +
    `${schemas}\n\n` +
    "You MUST strictly follow the above defined tool name and parameter schemas to invoke tool calls.\n"
  );
}

/** A V4 call's parameters: arguments that do not parse as JSON become `{"arguments": raw}`. */
function v4Parameters(raw: unknown): string {
  let args: unknown;
  if (typeof raw === "string") {
    try {
      args = parsePyJson(raw);
    } catch {
      args = { arguments: raw };
    }
  } else args = isDict(raw) ? raw : { arguments: raw };
  if (!isDict(args)) throw new DeepSeekEncodingError(`'${pyTypeName(args)}' object has no attribute 'items'`);
  return dsmlParameters(args);
}

/** `d.get(key, "")`: the value when the key is there (even None), else "". */
function getOr(item: unknown, key: string): unknown {
  return item !== null && typeof item === "object" && Object.prototype.hasOwnProperty.call(item, key) ? (item as Record<string, unknown>)[key] : "";
}

/** A part `"\n\n".join` accepts: a string (Python raises on anything else). */
function joinable(part: unknown): string {
  if (typeof part !== "string") throw new DeepSeekEncodingError(`sequence item: expected str instance, ${pyTypeName(part)} found`);
  return part;
}

/** A user block's text: its content, or its folded blocks (text parts and `<tool_result>` parts) joined by blank lines. */
function userBody(msg: EncoderMessage): string {
  const blocks = get(msg, "content_blocks");
  if (!pyTruthy(blocks)) return pyTruthy(get(msg, "content")) ? formatValue(get(msg, "content")) : "";
  const parts = (blocks as unknown[]).map((block) => {
    const type = get(block, "type");
    if (type === "text") return joinable(getOr(block, "text"));
    if (type === "tool_result") {
      let result = getOr(block, "content");
      if (Array.isArray(result)) {
        result = result
          .map((part) => (get(part, "type") === "text" ? joinable(getOr(part, "text")) : `[Unsupported ${formatValue(get(part, "type"))}]`))
          .join("\n\n");
      }
      return `<tool_result>${formatValue(result)}</tool_result>`;
    }
    return `[Unsupported ${formatValue(type)}]`;
  });
  return parts.join("\n\n");
}

/** `render_message` for V4: the message's own text, then the transition the next message calls for. */
function renderMessage(index: number, messages: readonly EncoderMessage[], thinkingMode: string, dropThinking: boolean, effort: unknown): string {
  if (thinkingMode !== "chat" && thinkingMode !== "thinking") throw new DeepSeekEncodingError(`Invalid thinking_mode \`${thinkingMode}\``);
  const msg = messages[index];
  const lastUser = lastUserIndex(messages);
  const role = get(msg, "role");
  const content = get(msg, "content");
  const tools = get(msg, "tools");
  const responseFormat = get(msg, "response_format");
  if (!(effort === "max" || effort === "high" || effort === null || effort === undefined)) {
    throw new DeepSeekEncodingError(`Invalid reasoning effort: ${formatValue(effort)}`);
  }
  let prompt = index === 0 && thinkingMode === "thinking" && effort === "max" ? REASONING_EFFORT_MAX : "";
  const extras = (): string =>
    (pyTruthy(tools) ? `\n\n${renderTools(tools as unknown[])}` : "") +
    (pyTruthy(responseFormat) ? `\n\n${RESPONSE_FORMAT_PREFIX}${toJson(responseFormat)}` : "");
  if (role === "system") prompt += (pyTruthy(content) ? formatValue(content) : "") + extras();
  else if (role === "developer") {
    if (!pyTruthy(content)) throw new DeepSeekEncodingError(`Invalid message for role \`${role}\`: ${JSON.stringify(msg)}`);
    prompt += USER_TOKEN + formatValue(content) + extras();
  } else if (role === "user") prompt += USER_TOKEN + userBody(msg);
  else if (role === "latest_reminder") prompt += LATEST_REMINDER_TOKEN + formatValue(content);
  else if (role === "tool") throw new DeepSeekEncodingError("deepseek_v4 merges tool messages into user; please preprocess with merge_tool_messages()");
  else if (role === "assistant") {
    const toolCalls = get(msg, "tool_calls");
    const calls = pyTruthy(toolCalls)
      ? dsmlBlock(
          "tool_calls",
          callsOf(toolCalls as unknown[]).map((call) => dsmlInvoke(call.name, v4Parameters(call.arguments))),
        )
      : "";
    const previousTask = index - 1 >= 0 && get(messages[index - 1], "task") !== undefined && get(messages[index - 1], "task") !== null;
    let thinking = "";
    if (thinkingMode === "thinking" && !previousTask && (!dropThinking || index > lastUser)) {
      const reasoning = get(msg, "reasoning_content");
      thinking = (pyTruthy(reasoning) ? formatValue(reasoning) : "") + THINK_CLOSE;
    }
    const body = thinking + (pyTruthy(content) ? formatValue(content) : "") + calls;
    prompt += pyTruthy(get(msg, "wo_eos")) ? body : body + EOS_TOKEN;
  } else throw new DeepSeekEncodingError(`Unknown role: ${formatValue(role)}`);

  const nextRole = index + 1 < messages.length ? get(messages[index + 1], "role") : undefined;
  if (index + 1 < messages.length && nextRole !== "assistant" && nextRole !== "latest_reminder") return prompt;
  const task = get(msg, "task");
  if (task !== undefined && task !== null) {
    if (typeof task !== "string" || !Object.prototype.hasOwnProperty.call(TASK_TOKENS, task)) {
      throw new DeepSeekEncodingError(`Invalid task: '${formatValue(task)}'. Valid tasks are: ${JSON.stringify(Object.keys(TASK_TOKENS))}`);
    }
    if (task !== "action") prompt += TASK_TOKENS[task];
    else prompt += ASSISTANT_TOKEN + (thinkingMode !== "thinking" ? THINK_CLOSE : THINK_OPEN) + TASK_TOKENS[task];
  } else if (role === "user" || role === "developer") {
    prompt += ASSISTANT_TOKEN;
    if (!dropThinking && thinkingMode === "thinking") prompt += THINK_OPEN;
    else if (dropThinking && thinkingMode === "thinking" && index >= lastUser) prompt += THINK_OPEN;
    else prompt += THINK_CLOSE;
  }
  return prompt;
}

/** `merge_tool_messages`: each tool result becomes a `tool_result` block of a user message; adjacent ones fold together. */
function mergeToolMessages(messages: readonly EncoderMessage[]): EncoderMessage[] {
  const merged: EncoderMessage[] = [];
  for (const original of messages) {
    const msg = deepCopy(original);
    const role = get(msg, "role");
    const last = merged[merged.length - 1];
    const lastIsBlockUser = last !== undefined && get(last, "role") === "user" && Object.prototype.hasOwnProperty.call(last, "content_blocks");
    if (role === "tool") {
      const block = { type: "tool_result", tool_use_id: get(msg, "tool_call_id") ?? "", content: "content" in msg ? msg.content : "" };
      if (lastIsBlockUser) (last.content_blocks as unknown[]).push(block);
      else merged.push({ role: "user", content_blocks: [block] });
    } else if (role === "user") {
      const text = { type: "text", text: "content" in msg ? msg.content : "" };
      if (lastIsBlockUser && (get(last, "task") === undefined || get(last, "task") === null)) (last.content_blocks as unknown[]).push(text);
      else {
        const fresh: EncoderMessage = { role: "user", content: "content" in msg ? msg.content : "", content_blocks: [text] };
        for (const key of ["task", "wo_eos", "mask"]) if (key in msg) fresh[key] = msg[key];
        merged.push(fresh);
      }
    } else merged.push(msg);
  }
  return merged;
}

/** `sort_tool_results_by_call_order`: a user block's tool results follow the order of the calls that asked for them. */
function sortToolResults(messages: EncoderMessage[]): EncoderMessage[] {
  let order = new Map<string, number>();
  for (const msg of messages) {
    const role = get(msg, "role");
    const calls = get(msg, "tool_calls");
    if (role === "assistant" && pyTruthy(calls)) {
      order = new Map();
      (calls as unknown[]).forEach((call, idx) => {
        const id = get(call, "id") || get(get(call, "function"), "id") || "";
        if (pyTruthy(id)) order.set(id as string, idx);
      });
    } else if (role === "user" && pyTruthy(get(msg, "content_blocks"))) {
      const blocks = msg.content_blocks as unknown[];
      const results = blocks.filter((block) => get(block, "type") === "tool_result");
      if (results.length > 1 && order.size > 0) {
        const rank = (block: unknown): number => order.get(get(block, "tool_use_id") as string) ?? 0;
        const sorted = [...results].sort((a, b) => rank(a) - rank(b)); // stable, as Python's sorted
        let next = 0;
        msg.content_blocks = blocks.map((block) => (get(block, "type") === "tool_result" ? sorted[next++] : block));
      }
    }
  }
  return messages;
}

/** `_drop_thinking_messages`: before the last user turn, assistants lose reasoning and developer turns are dropped. */
function dropThinkingMessages(messages: readonly EncoderMessage[]): EncoderMessage[] {
  const lastUser = lastUserIndex(messages);
  const keep = new Set(["user", "system", "tool", "latest_reminder", "direct_search_results"]);
  const out: EncoderMessage[] = [];
  messages.forEach((msg, idx) => {
    const role = get(msg, "role");
    if (keep.has(role as string) || idx >= lastUser) out.push(msg);
    else if (role === "assistant") {
      const copy = { ...msg };
      delete copy.reasoning_content;
      out.push(copy);
    }
  });
  return out;
}

/** `encode_messages` of V4: tool results folded into user blocks, then every message rendered with its transition. */
export function encodeMessagesV4(messages: readonly EncoderMessage[], options: EncodeOptionsV4): string {
  let context: EncoderMessage[] = [...(options.context ?? [])];
  let current = mergeToolMessages(messages);
  current = sortToolResults([...context, ...current]).slice(context.length);
  if (context.length > 0) context = sortToolResults(mergeToolMessages(context));
  let full = [...context, ...current];
  let prompt = (options.addDefaultBosToken ?? true) && context.length === 0 ? BOS_TOKEN : "";
  let dropThinking = options.dropThinking ?? true;
  if (full.some((m) => pyTruthy(get(m, "tools")))) dropThinking = false;
  let count = current.length;
  let contextLength = context.length;
  if (options.thinkingMode === "thinking" && dropThinking) {
    full = dropThinkingMessages(full);
    count = full.length - dropThinkingMessages(context).length;
    contextLength = full.length - count;
  }
  for (let i = 0; i < count; i++) prompt += renderMessage(i + contextLength, full, options.thinkingMode, dropThinking, options.reasoningEffort);
  return prompt;
}

/**
 * The text `encodeMessagesV4(old + appended)` adds after `encodeMessagesV4(old)`, rendered from the tail alone: with
 * thinking kept (or chat mode) a V4 message's text depends only on its neighbours, the folding of the appended tool
 * and user turns starts fresh after the stored assistant turn, and their order follows the last assistant turn with
 * calls. Null when those conditions do not hold (a context, dropped thinking, a history not ending in an assistant turn
 * without a task): the caller then renders both lists whole.
 */
export function encodeAppendedV4(old: readonly EncoderMessage[], appended: readonly EncoderMessage[], options: EncodeOptionsV4): string | null {
  if ((options.context ?? []).length > 0 || old.length === 0 || appended.length === 0) return null;
  if (options.thinkingMode === "thinking" && (options.dropThinking ?? true)) return null;
  const last = old[old.length - 1];
  const task = get(last, "task");
  if (get(last, "role") !== "assistant" || (task !== undefined && task !== null)) return null;
  let source: EncoderMessage | undefined;
  for (let i = old.length - 1; i >= 0 && source === undefined; i--)
    if (get(old[i], "role") === "assistant" && pyTruthy(get(old[i], "tool_calls"))) source = old[i];
  const tail = mergeToolMessages(appended);
  sortToolResults(source === undefined ? [...tail] : [source, ...tail]);
  const window = [deepCopy(last), ...tail];
  let text = "";
  for (let i = 1; i < window.length; i++) text += renderMessage(i, window, options.thinkingMode, options.dropThinking ?? true, options.reasoningEffort);
  return text;
}
