// DeepSeek V3.2's prompt encoder in TypeScript: the behaviour of miles' vendored `encoding_dsv32.py` (its
// `encode_messages`, with miles' `drop_thinking=False` changes), written anew. V3.2 ships no Jinja template.
import { ChatTemplateError } from "../chat-template-error";
import {
  ASSISTANT_TOKEN,
  at,
  BOS_TOKEN,
  callsOf,
  dsmlBlock,
  dsmlInvoke,
  dsmlParameters,
  DSML,
  EOS_TOKEN,
  formatValue,
  get,
  isDict,
  jsonLoads,
  lastUserIndex,
  pyTruthy,
  THINK_CLOSE,
  THINK_OPEN,
  toJson,
  USER_TOKEN,
  type EncoderMessage,
} from "./dsml";

/** `DS32EncodingError` (and the encoder's other raises) with Python's text. */
export class DeepSeekEncodingError extends ChatTemplateError {}

/** The keyword arguments `encode_messages` takes. */
export interface EncodeOptions {
  thinkingMode: string;
  context?: readonly EncoderMessage[] | null;
  dropThinking?: boolean;
  addDefaultBosToken?: boolean;
}

const RESPONSE_FORMAT_PREFIX = "## Response Format:\n\nYou MUST strictly adhere to the following schema to reply:\n";

/** The tools section of the system prompt (`render_tools` over `TOOLS_SYSTEM_TEMPLATE`). */
function renderTools(tools: readonly unknown[]): string {
  const schemas = tools.map((tool) => toJson(get(tool, "function"))).join("\n");
  return (
    "## Tools\n" +
    "You have access to a set of tools you can use to answer the user's question.\n" +
    `You can invoke functions by writing a "<${DSML}function_calls>" block like the following as part of your reply to the user:\n` +
    `<${DSML}function_calls>\n` +
    `<${DSML}invoke name="$FUNCTION_NAME">\n` +
    `<${DSML}parameter name="$PARAMETER_NAME" string="true|false">$PARAMETER_VALUE</${DSML}parameter>\n` +
    "...\n" +
    `</${DSML}invoke>\n` +
    `<${DSML}invoke name="$FUNCTION_NAME2">\n` +
    "...\n" +
    `</${DSML}invoke>\n` +
    `</${DSML}function_calls>\n` +
    "String and scalar parameters should be specified as is without any escaping or quotes, while lists and objects should use JSON format. " +
    'The "string" attribute should be set to "true" for string type parameters and "false" for other types (numbers, booleans, arrays, objects).\n' +
    "If the thinking_mode is enabled, then after function results you should strongly consider outputting a thinking block. Here is an example:\n" +
    `<${DSML}function_calls>\n` +
    "...\n" +
    `</${DSML}function_calls>\n` +
    "<function_results>\n" +
    "...\n" +
    "</function_results>\n" +
    `${THINK_OPEN}...thinking about results${THINK_CLOSE}\n` +
    "Here are the functions available in JSONSchema format:\n" +
    "<functions>\n" +
    `${schemas}\n` +
    "</functions>\n"
  );
}

/** A V3.2 call's parameters: its arguments must be (or parse to) a JSON object. */
function v32Parameters(raw: unknown): string {
  const args = typeof raw === "string" ? jsonLoads(raw) : raw;
  if (!isDict(args)) throw new DeepSeekEncodingError("Assistant tool call function.arguments must be a JSON object.");
  return dsmlParameters(args);
}

/** What follows a user turn (or a completed tool-result block): `<think>` while every turn keeps its thinking. */
function opener(index: number, lastUser: number, thinkingMode: string, dropThinking: boolean, fromTool: boolean): string {
  if (thinkingMode !== "thinking") return THINK_CLOSE;
  if (!dropThinking) return THINK_OPEN;
  return (fromTool ? index >= lastUser : index === lastUser) ? THINK_OPEN : THINK_CLOSE;
}

/** `render_message`: the text of message `index` of `messages`. */
function renderMessage(index: number, messages: readonly EncoderMessage[], thinkingMode: string, dropThinking: boolean): string {
  if (!(index >= 0 && index < messages.length)) {
    throw new DeepSeekEncodingError(`Index ${index} out of range for messages list of length ${messages.length}`);
  }
  if (thinkingMode !== "chat" && thinkingMode !== "thinking") throw new DeepSeekEncodingError(`Invalid thinking_mode \`${thinkingMode}\``);
  const msg = messages[index];
  const lastUser = lastUserIndex(messages);
  const role = get(msg, "role");
  const content = get(msg, "content");
  const tools = get(msg, "tools");
  const responseFormat = get(msg, "response_format");
  const toolCalls = get(msg, "tool_calls");
  let prompt = "";
  if (role === "system") {
    prompt += pyTruthy(content) ? formatValue(content) : "";
    if (pyTruthy(tools)) prompt += `\n\n${renderTools(tools as unknown[])}`;
    if (pyTruthy(responseFormat)) prompt += `\n\n${RESPONSE_FORMAT_PREFIX}${toJson(responseFormat)}`;
  } else if (role === "developer") {
    if (!pyTruthy(content)) throw new DeepSeekEncodingError(`Invalid message for role \`${role}\`: ${JSON.stringify(msg)}`);
    let developer = "";
    if (pyTruthy(tools)) developer += `\n\n${renderTools(tools as unknown[])}`;
    if (pyTruthy(responseFormat)) developer += `\n\n${RESPONSE_FORMAT_PREFIX}${toJson(responseFormat)}`;
    developer += `\n\n# The user's message is: ${formatValue(content)}`;
    prompt += `${USER_TOKEN}${developer}${ASSISTANT_TOKEN}${opener(index, lastUser, thinkingMode, dropThinking, false)}`;
  } else if (role === "user") {
    prompt += `${USER_TOKEN}${formatValue(content)}${ASSISTANT_TOKEN}${opener(index, lastUser, thinkingMode, dropThinking, false)}`;
  } else if (role === "tool") {
    prompt += renderToolResult(index, messages, content, thinkingMode, dropThinking, lastUser);
  } else if (role === "assistant") {
    let callsText = "";
    if (pyTruthy(toolCalls)) {
      const invokes = callsOf(toolCalls as unknown[]).map((call) => dsmlInvoke(call.name, v32Parameters(call.arguments)));
      callsText = dsmlBlock("function_calls", invokes);
    }
    const reasoning = get(msg, "reasoning_content");
    if (dropThinking && thinkingMode === "thinking" && index > lastUser && !(pyTruthy(reasoning) || pyTruthy(toolCalls))) {
      throw new DeepSeekEncodingError(
        `ThinkingMode: ${thinkingMode}, invalid message without reasoning_content/tool_calls \`${JSON.stringify(msg)}\` after last user message`,
      );
    }
    const thinking =
      thinkingMode === "thinking" && (!dropThinking || index > lastUser) ? `${pyTruthy(reasoning) ? formatValue(reasoning) : ""}${THINK_CLOSE}` : "";
    prompt += `${thinking}${pyTruthy(content) ? formatValue(content) : ""}${callsText}${EOS_TOKEN}`;
  } else {
    throw new DeepSeekEncodingError(`Unknown role: ${formatValue(role)}`);
  }
  return prompt;
}

/** A tool result: opens `<function_results>` on the first of a call's results, closes it after the last. */
function renderToolResult(
  index: number,
  messages: readonly EncoderMessage[],
  content: unknown,
  thinkingMode: string,
  dropThinking: boolean,
  lastUser: number,
): string {
  let previous = index - 1;
  let assistant = at(messages, previous);
  while (previous >= 0 && get(assistant, "role") === "tool") {
    previous -= 1;
    assistant = at(messages, previous);
  }
  if (!(index === 0 || (previous >= 0 && get(assistant, "role") === "assistant"))) {
    throw new DeepSeekEncodingError(`Invalid messages at ${index}:\n${JSON.stringify(assistant)}`);
  }
  const order = index - previous;
  const calls = get(assistant, "tool_calls");
  if (!(pyTruthy(calls) && Array.isArray(calls) && calls.length >= order)) throw new DeepSeekEncodingError("No tool calls but found tool output");
  let text = order === 1 ? "\n\n<function_results>" : "";
  text += `\n<result>${formatValue(content)}</result>`;
  if (order === calls.length) text += `\n</function_results>\n\n${opener(index, lastUser, thinkingMode, dropThinking, true)}`;
  return text;
}

/** `drop_thinking_messages`: assistants before the last user turn lose their reasoning. */
function dropThinkingMessages(messages: readonly EncoderMessage[]): EncoderMessage[] {
  const lastUser = lastUserIndex(messages);
  const out: EncoderMessage[] = [];
  messages.forEach((msg, idx) => {
    const role = get(msg, "role");
    if (role === "user" || role === "system" || role === "tool" || idx >= lastUser) out.push(msg);
    else if (role === "assistant") {
      const copy = { ...msg };
      delete copy.reasoning_content;
      out.push(copy);
    }
  });
  return out;
}

/** `encode_messages`: the prompt text of `messages` after `context` (BOS only when there is no context). */
export function encodeMessagesV32(messages: readonly EncoderMessage[], options: EncodeOptions): string {
  const context = options.context ?? [];
  const dropThinking = options.dropThinking ?? true;
  let full = [...context, ...messages];
  let prompt = (options.addDefaultBosToken ?? true) && context.length === 0 ? BOS_TOKEN : "";
  if (options.thinkingMode === "thinking" && dropThinking) full = dropThinkingMessages(full);
  for (let i = 0; i < messages.length; i++) prompt += renderMessage(i + context.length, full, options.thinkingMode, dropThinking);
  return prompt;
}
