// miles' DeepSeek bridge (chat_template_utils/deepseek.py) as a template renderer: kwargs resolved to a thinking mode,
// tools injected into the system message, the encoder run, and the generation prompt cut when none is asked for.
import type { ChatTemplateRenderer } from "../checkpoint-tokenizer";
import { ChatTemplateError } from "../chat-template-error";
import { canonicalizeTools } from "../sglang-tools";
import type { ChatMessage, ChatTemplateKwargs, RenderOptions } from "../types";
import { ASSISTANT_TOKEN, deepCopy, get, isDict, pyTruthy, sameData, THINK_CLOSE, THINK_OPEN, type EncoderMessage } from "./dsml";
import { encodeMessagesV32 } from "./encoding-dsv32";
import { encodeAppendedV4, encodeMessagesV4 } from "./encoding-dsv4";

/** The two DeepSeek official-encoder versions, by the `model_type` their config.json declares. */
export type DeepSeekEncoderName = "deepseek_v32" | "deepseek_v4";

/** The `model_type` values miles routes to an encoder (`deepseek._FAMILIES`). */
export const DEEPSEEK_MODEL_TYPES: readonly DeepSeekEncoderName[] = ["deepseek_v32", "deepseek_v4"];

const V32_PARAMETERS = ["thinking_mode", "context", "drop_thinking", "add_default_bos_token"];
const V4_PARAMETERS = [...V32_PARAMETERS, "reasoning_effort"];

/**
 * `_build_encode_config`: `enable_thinking`, then `thinking` (each when not None, by truth value) set `thinking_mode`
 * unless it is given; `thinking_mode` defaults to `"thinking"`. The two switches are consumed; the rest is kept.
 */
export function deepSeekEncodeConfig(kwargs: Readonly<ChatTemplateKwargs>): Record<string, unknown> {
  const config: Record<string, unknown> = { ...kwargs };
  for (const key of ["enable_thinking", "thinking"]) {
    const value = config[key];
    delete config[key];
    if (value !== null && value !== undefined && !("thinking_mode" in config)) config.thinking_mode = pyTruthy(value) ? "thinking" : "chat";
  }
  if (!("thinking_mode" in config)) config.thinking_mode = "thinking";
  return config;
}

/** `render_thinking_enabled`: whether the kwargs resolve to thinking mode. */
export function deepSeekThinkingEnabled(kwargs: Readonly<ChatTemplateKwargs>): boolean {
  return deepSeekEncodeConfig(kwargs).thinking_mode === "thinking";
}

/**
 * `_inject_tools_into_system`: a copy of the messages whose first message is a system message (an empty one is
 * inserted when there is none) carrying the tools as SGLang's `Tool.model_dump()` gives them. A bare function object
 * (no `function` key) is refused, as `Tool.model_validate` refuses it.
 */
function withToolsInSystem(messages: EncoderMessage[], tools: readonly unknown[]): EncoderMessage[] {
  tools.forEach((tool, index) => {
    if (!isDict(tool) || !("function" in tool)) {
      throw new ChatTemplateError(`tools[${index}] is not an OpenAI tool ({"type": "function", "function": {...}}): SGLang's Tool model refuses it`);
    }
  });
  const out = messages;
  if (out.length === 0 || get(out[0], "role") !== "system") out.unshift({ role: "system", content: "" });
  out[0] = { ...out[0], tools: canonicalizeTools(tools) };
  return out;
}

/** `normalize_tool_arguments(messages, "json")`'s part the encoders see: an assistant's null content becomes "". */
function prepared(messages: readonly ChatMessage[]): EncoderMessage[] {
  const copy = deepCopy(messages as unknown as EncoderMessage[]);
  for (const message of copy) if (get(message, "role") === "assistant" && (message.content === null || message.content === undefined)) message.content = "";
  return copy;
}

/** A DeepSeek official encoder as this package's template renderer (`deepseek.DeepSeekV32Family` / `DeepSeekV4Family`). */
export class DeepSeekEncoderRenderer implements ChatTemplateRenderer {
  /** No Jinja source: the encoder is code. */
  readonly source = "";
  readonly origin: string;

  constructor(readonly encoder: DeepSeekEncoderName) {
    this.origin = encoder === "deepseek_v32" ? "encoding_dsv32.py" : "encoding_dsv4.py";
  }

  /**
   * The prompt text: the encoder's render of the messages (tools injected into the system message), with the
   * family's next-assistant suffix cut when `addGenerationPrompt` is false.
   * @throws ChatTemplateError with the encoder's own text (an unknown kwarg, a bad thinking mode, a malformed turn)
   */
  render(messages: readonly ChatMessage[], options: RenderOptions = {}): string {
    const config = deepSeekEncodeConfig(options.kwargs ?? {});
    const allowed = this.encoder === "deepseek_v32" ? V32_PARAMETERS : V4_PARAMETERS;
    for (const key of Object.keys(config)) {
      if (!allowed.includes(key)) throw new ChatTemplateError(`encode_messages() got an unexpected keyword argument '${key}'`);
    }
    let input = prepared(messages);
    if (pyTruthy(options.tools)) input = withToolsInSystem(input, options.tools as unknown[]);
    const context = Array.isArray(config.context) ? (config.context as EncoderMessage[]) : null;
    const common = {
      thinkingMode: config.thinking_mode as string,
      context,
      dropThinking: "drop_thinking" in config ? pyTruthy(config.drop_thinking) : true,
      addDefaultBosToken: "add_default_bos_token" in config ? pyTruthy(config.add_default_bos_token) : true,
    };
    const rendered =
      this.encoder === "deepseek_v32" ? encodeMessagesV32(input, common) : encodeMessagesV4(input, { ...common, reasoningEffort: config.reasoning_effort });
    if ((options.addGenerationPrompt ?? false) || messages.length === 0) return rendered;
    const suffix = this.generationSuffix(get(messages[messages.length - 1], "role"), config.thinking_mode === "thinking" ? THINK_OPEN : THINK_CLOSE);
    return suffix !== null && rendered.endsWith(suffix) ? rendered.slice(0, rendered.length - suffix.length) : rendered;
  }

  /**
   * `render(newer, {addGenerationPrompt: true})` less `render(older)` when `newer` starts with `older` (same data, keys
   * in the same order) and V4's encoder can render the appended tail alone ({@link encodeAppendedV4}): the
   * real-history suffix at a cost that does not grow with the history. Null when it cannot say; render both then.
   */
  renderHistorySuffix(older: readonly ChatMessage[], newer: readonly ChatMessage[], options: RenderOptions = {}): string | null {
    if (this.encoder !== "deepseek_v4" || newer.length <= older.length) return null;
    for (let i = 0; i < older.length; i++) if (!sameData(older[i], newer[i])) return null;
    const config = deepSeekEncodeConfig(options.kwargs ?? {});
    for (const key of Object.keys(config)) if (!V4_PARAMETERS.includes(key)) return null;
    if (Array.isArray(config.context) && config.context.length > 0) return null;
    const appended = prepared(newer.slice(older.length));
    const last = prepared(older.slice(-1));
    return encodeAppendedV4([...older.slice(0, -1), ...last] as EncoderMessage[], appended, {
      thinkingMode: config.thinking_mode as string,
      dropThinking: "drop_thinking" in config ? pyTruthy(config.drop_thinking) : true,
      reasoningEffort: config.reasoning_effort,
    });
  }

  /** `_generation_prompt_suffix`: what the encoder appended after a generation-ready tail (null: nothing to cut). */
  private generationSuffix(role: unknown, thinkingToken: string): string | null {
    if (role === "user" || role === "developer") return ASSISTANT_TOKEN + thinkingToken;
    if (role === "tool") return this.encoder === "deepseek_v32" ? `\n\n${thinkingToken}` : ASSISTANT_TOKEN + thinkingToken;
    return null;
  }
}
