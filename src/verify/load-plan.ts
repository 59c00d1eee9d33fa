// Builds a verification plan from the command's inputs: reads the checkpoint, the template and the family.
// The I/O edge of the verifier; the seam the family registry replaces is familyVerifyTarget at the bottom.
import { promises as fsp } from "node:fs";
import * as path from "node:path";
import { ChatTemplate, qwen3ChatTemplate } from "../tokenizer/chat-template";
import { defaultTokenizerDirectory, loadTokenizer } from "../tokenizer/load";
import type { Qwen3Tokenizer } from "../tokenizer/qwen3-tokenizer";
import { QWEN3_PINNED_KWARGS, QWEN3_TITO_APPEND_ROLES, Qwen3Tito } from "../tokenizer/tito";
import type { ChatMessage, ChatTemplateKwargs, ToolCall, ToolSpec } from "../tokenizer/types";
import { THINKING_MODES, type TemplateRenderTarget, type TemplateVerifyFamily, type TemplateVerifyPlan, type ThinkingMode } from "./types";

/** Inputs of a verification, as the command and {@link verifyTemplate} take them. */
export interface VerifyTemplateOptions {
  /** Checkpoint directory (tokenizer.json, tokenizer_config.json, optional chat_template.jinja); default the packaged Qwen3 one. */
  hfCheckpoint?: string;
  /** Family to verify through (TITO layer too); without it only the template's text layer is checked. */
  titoModel?: string;
  /** A template file that replaces the family's (or the checkpoint's) template. */
  chatTemplatePath?: string;
  /** Kwargs of every render (`{"clear_thinking": false}`); the family's pinned ones may not be contradicted. */
  chatTemplateKwargs?: ChatTemplateKwargs;
  /** `off` (non-thinking trajectories), `on` (thinking ones, `enable_thinking` true; the default, as in miles), `both`. */
  thinking?: ThinkingMode;
}

/** The inputs cannot be turned into a plan: an unknown family, an unreadable checkpoint or template, a kwargs conflict. */
export class TemplateVerifyLoadError extends Error {
  override readonly name = "TemplateVerifyLoadError";
}

/** Families the verifier knows until the family registry lands. */
export const VERIFY_TITO_MODELS: readonly string[] = ["qwen3", "default"];

const ALL_APPEND_ROLES: readonly string[] = ["tool", "user", "system", "assistant"];

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** The checkpoint's own template: `chat_template.jinja` beside the tokenizer files, else tokenizer_config.json's `chat_template`. */
async function nativeTemplate(directory: string): Promise<ChatTemplate> {
  const jinjaFile = path.join(directory, "chat_template.jinja");
  const fromFile = await fsp.readFile(jinjaFile, "utf8").catch(() => null);
  if (fromFile !== null) return new ChatTemplate(fromFile, jinjaFile);
  const configFile = path.join(directory, "tokenizer_config.json");
  let config: unknown;
  try {
    config = JSON.parse(await fsp.readFile(configFile, "utf8"));
  } catch (error) {
    throw new TemplateVerifyLoadError(`cannot read ${configFile}: ${describe(error)}`);
  }
  const entry = (config as { chat_template?: unknown }).chat_template;
  // transformers also accepts a list of named templates; the one named "default" is the chat template
  const source = Array.isArray(entry) ? (entry as { name?: unknown; template?: unknown }[]).find((item) => item.name === "default")?.template : entry;
  if (typeof source !== "string") throw new TemplateVerifyLoadError(`${configFile} has no chat_template and ${directory} has no chat_template.jinja`);
  return new ChatTemplate(source, configFile);
}

async function templateFile(file: string): Promise<ChatTemplate> {
  try {
    return ChatTemplate.fromFile(file);
  } catch (error) {
    throw new TemplateVerifyLoadError(`--chat-template-path: ${describe(error)}`);
  }
}

function renderTarget(template: ChatTemplate, kwargs: ChatTemplateKwargs): TemplateRenderTarget {
  return { kwargs, render: (messages, options) => template.render(messages, { ...options, kwargs }) };
}

/**
 * Reads what `options` name and returns the plan {@link verifyChatTemplate} runs.
 * @throws TemplateVerifyLoadError naming the flag, file or family at fault
 */
export async function loadTemplateVerifyPlan(options: VerifyTemplateOptions): Promise<TemplateVerifyPlan> {
  const thinking = options.thinking ?? "on";
  if (!THINKING_MODES.includes(thinking))
    throw new TemplateVerifyLoadError(`--thinking must be one of ${THINKING_MODES.join(", ")}, got ${JSON.stringify(thinking)}`);
  const userKwargs = options.chatTemplateKwargs ?? {};
  if (userKwargs === null || typeof userKwargs !== "object" || Array.isArray(userKwargs)) {
    throw new TemplateVerifyLoadError("--chat-template-kwargs must be a JSON object");
  }
  const directory = options.hfCheckpoint === undefined ? defaultTokenizerDirectory() : path.resolve(options.hfCheckpoint);
  const override = options.chatTemplatePath === undefined ? null : await templateFile(options.chatTemplatePath);

  if (options.titoModel === undefined) {
    const template = override ?? (await nativeTemplate(directory));
    return {
      titoModel: null,
      templateSource: override !== null ? `file: ${options.chatTemplatePath}` : `checkpoint: ${directory}`,
      allowedAppendRoles: new Set(ALL_APPEND_ROLES),
      thinking,
      templateKwargs: { ...userKwargs },
      renderer: (kwargs) => renderTarget(template, kwargs),
    };
  }
  if (!VERIFY_TITO_MODELS.includes(options.titoModel)) {
    throw new TemplateVerifyLoadError(`unknown --tito-model ${JSON.stringify(options.titoModel)}; known families: ${VERIFY_TITO_MODELS.join(", ")}`);
  }
  let tokenizer: Qwen3Tokenizer;
  try {
    tokenizer = await loadTokenizer({ hfCheckpoint: directory });
  } catch (error) {
    throw new TemplateVerifyLoadError(`--tito-model ${options.titoModel}: ${describe(error)}`);
  }
  return familyVerifyTarget(options.titoModel, tokenizer, override, options.chatTemplatePath, directory, thinking, userKwargs);
}

/**
 * The seam the family registry replaces: a family name to its template, pinned kwargs, append roles, trailing ids
 * and merge rule. `qwen3`: the package's append-safe template, `clear_thinking` pinned false, "\n" trailing, "\n"
 * re-inserted after `<|im_end|>` (miles' Qwen3TITOTokenizer). `default`: the checkpoint's own template, nothing
 * pinned or trimmed, plain concatenation (miles' TITOTokenizer).
 */
async function familyVerifyTarget(
  name: string,
  tokenizer: Qwen3Tokenizer,
  override: ChatTemplate | null,
  overridePath: string | undefined,
  directory: string,
  thinking: ThinkingMode,
  userKwargs: ChatTemplateKwargs,
): Promise<TemplateVerifyPlan> {
  const pinned: ChatTemplateKwargs = name === "qwen3" ? { ...QWEN3_PINNED_KWARGS } : {};
  const autoSetKwargs: ChatTemplateKwargs = {};
  for (const [key, value] of Object.entries(pinned)) if (!(key in userKwargs)) autoSetKwargs[key] = value;
  const templateKwargs = { ...userKwargs, ...autoSetKwargs };
  const template = override ?? (name === "qwen3" ? qwen3ChatTemplate() : await nativeTemplate(directory));
  const rendering = tokenizer.withChatTemplate(template);
  const source =
    override !== null
      ? `template override via TITO: ${overridePath}`
      : name === "qwen3"
        ? "fixed template via TITO: qwen3-append-safe.jinja"
        : `checkpoint via TITO: ${directory}`;
  const allowed = new Set(name === "qwen3" ? QWEN3_TITO_APPEND_ROLES : ALL_APPEND_ROLES);

  const family = (kwargs: ChatTemplateKwargs): TemplateVerifyFamily => {
    const encode = (text: string): number[] => rendering.encode(text);
    const decode = (ids: readonly number[]): string => rendering.decode(ids, { skipSpecialTokens: false });
    if (name === "qwen3") {
      // the kwargs are layered as a request's are, so a conflict carries miles' TITOTokenizer.__init__ text
      const tito = new Qwen3Tito(rendering);
      let merged: ChatTemplateKwargs;
      try {
        merged = tito.mergeKwargs(kwargs);
      } catch (error) {
        throw new TemplateVerifyLoadError(`--chat-template-kwargs: ${describe(error)}`);
      }
      return {
        name,
        kwargs: merged,
        trailingIds: new Set([rendering.newlineId]),
        render: (messages, options) => rendering.renderChatTemplate(messages, { ...options, kwargs: merged }),
        encode,
        decode,
        mergeTokens: (prefix, full, ids, tools) => tito.mergeTokens(prefix, full, ids, tools, merged),
      };
    }
    const render = (messages: readonly ChatMessage[], options: { tools: readonly ToolSpec[] | null; addGenerationPrompt: boolean }): string =>
      rendering.renderChatTemplate(messages, { ...options, kwargs });
    return {
      name,
      kwargs,
      trailingIds: new Set(),
      render,
      encode,
      decode,
      mergeTokens: (prefix, full, ids, tools) => [...ids, ...dummyContextSuffix(render, encode, prefix, full, tools)],
    };
  };
  // A pinned-kwarg conflict is a load problem, found before any case runs.
  family(templateKwargs);
  return {
    titoModel: name,
    templateSource: source,
    allowedAppendRoles: allowed,
    thinking,
    templateKwargs,
    autoSetKwargs,
    renderer: (kwargs) => family(kwargs),
    family,
  };
}

const DUMMY_SYSTEM: ChatMessage = { role: "system", content: "dummy system" };

/**
 * miles' `TITOTokenizer.tokenize_additional_messages`: the appended messages and the generation prompt rendered under
 * `[dummy system, dummy assistant]` (the assistant keeps the stored turn's tool calls), minus the render of that context.
 */
function dummyContextSuffix(
  render: (messages: readonly ChatMessage[], options: { tools: readonly ToolSpec[] | null; addGenerationPrompt: boolean }) => string,
  encode: (text: string) => number[],
  prefix: readonly ChatMessage[],
  full: readonly ChatMessage[],
  tools: readonly ToolSpec[] | null,
): number[] {
  const appended = full.slice(prefix.length);
  const bad = appended.find((message) => !ALL_APPEND_ROLES.includes(message.role));
  if (bad !== undefined) throw new Error(`appended role ${JSON.stringify(bad.role)} is not an append role`);
  const toolCalls: ToolCall[] = prefix[prefix.length - 1]?.tool_calls ?? [];
  const base: ChatMessage[] = [DUMMY_SYSTEM, { role: "assistant", content: "", reasoning_content: " ", tool_calls: toolCalls }];
  const without = render(base, { tools, addGenerationPrompt: false });
  const withAppended = render([...base, ...appended], { tools, addGenerationPrompt: true });
  if (!withAppended.startsWith(without)) {
    const roles = appended.length > 0 ? appended.map((message) => message.role) : ["generation_prompt"];
    throw new Error(`rendered suffix diff failed for [${roles.join(", ")}]`);
  }
  return encode(withAppended.slice(without.length));
}
