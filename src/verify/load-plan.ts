// Builds a verification plan from the command's inputs: reads the checkpoint, the template and the family.
// The I/O edge of the verifier: a family comes from the tokenizer's family registry, its rules from FamilyTito.
import { promises as fsp } from "node:fs";
import * as path from "node:path";
import { ChatTemplate, qwen3TemplatePath } from "../tokenizer/chat-template";
import { CheckpointTokenizer, type ChatTemplateRenderer } from "../tokenizer/checkpoint-tokenizer";
import { getTitoFamily } from "../tokenizer/families/registry";
import type { TitoFamily } from "../tokenizer/families/types";
import { defaultTokenizerDirectory } from "../tokenizer/load";
import { NativeChatTemplate, specialTokenVariables } from "../tokenizer/native-template";
import { FamilyTito, resolveTokenRef } from "../tokenizer/tito";
import type { ChatTemplateKwargs } from "../tokenizer/types";
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

const ALL_APPEND_ROLES: readonly string[] = ["tool", "user", "system", "assistant"];

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

async function readJson(file: string): Promise<Record<string, unknown>> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(await fsp.readFile(file, "utf8"));
  } catch (error) {
    const why = (error as NodeJS.ErrnoException).code === "ENOENT" ? "file not found" : describe(error);
    throw new TemplateVerifyLoadError(`cannot read ${file}: ${why}`);
  }
  if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) throw new TemplateVerifyLoadError(`${file} does not hold a JSON object`);
  return parsed as Record<string, unknown>;
}

/**
 * The checkpoint's own template in transformers' environment: tokenizer_config.json's `chat_template` (a string, or
 * the list entry named "default"), else `chat_template.jinja` beside it (miles' `load_hf_chat_template`).
 */
async function nativeTemplate(directory: string, config: Record<string, unknown>): Promise<ChatTemplateRenderer> {
  const entry = config.chat_template;
  const configFile = path.join(directory, "tokenizer_config.json");
  const named = Array.isArray(entry) ? (entry as { name?: unknown; template?: unknown }[]).find((item) => item.name === "default")?.template : entry;
  if (typeof named === "string") return parsed(() => new NativeChatTemplate(named, configFile, specialTokenVariables(config)), configFile);
  const jinjaFile = path.join(directory, "chat_template.jinja");
  const fromFile = await fsp.readFile(jinjaFile, "utf8").catch(() => null);
  if (fromFile === null) throw new TemplateVerifyLoadError(`${configFile} has no chat_template and ${directory} has no chat_template.jinja`);
  return parsed(() => new NativeChatTemplate(fromFile, jinjaFile, specialTokenVariables(config)), jinjaFile);
}

function parsed(build: () => ChatTemplateRenderer, file: string): ChatTemplateRenderer {
  try {
    return build();
  } catch (error) {
    throw new TemplateVerifyLoadError(`${file}: ${describe(error)}`);
  }
}

/** A `--chat-template-path` file, rendered the way the family's own template kind is (bundled helpers, or transformers'). */
async function templateFile(file: string, kind: "bundled" | "checkpoint", config: Record<string, unknown>): Promise<ChatTemplateRenderer> {
  let source: string;
  try {
    source = await fsp.readFile(file, "utf8");
  } catch (error) {
    throw new TemplateVerifyLoadError(`--chat-template-path: cannot read chat template ${file}: ${describe(error)}`);
  }
  return parsed(() => (kind === "bundled" ? new ChatTemplate(source, file) : new NativeChatTemplate(source, file, specialTokenVariables(config))), file);
}

function renderTarget(template: ChatTemplateRenderer, kwargs: ChatTemplateKwargs): TemplateRenderTarget {
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
  const config = await readJson(path.join(directory, "tokenizer_config.json"));

  if (options.titoModel === undefined) {
    const template =
      options.chatTemplatePath === undefined ? await nativeTemplate(directory, config) : await templateFile(options.chatTemplatePath, "checkpoint", config);
    return {
      titoModel: null,
      templateSource: options.chatTemplatePath !== undefined ? `file: ${options.chatTemplatePath}` : `checkpoint: ${directory}`,
      allowedAppendRoles: new Set(ALL_APPEND_ROLES),
      thinking,
      templateKwargs: { ...userKwargs },
      renderer: (kwargs) => renderTarget(template, kwargs),
    };
  }
  let family: TitoFamily;
  try {
    family = getTitoFamily(options.titoModel);
  } catch (error) {
    throw new TemplateVerifyLoadError(describe(error));
  }
  return familyPlan(family, directory, config, options.chatTemplatePath, thinking, userKwargs);
}

/** The family's template: the --chat-template-path file, the bundled file, or the checkpoint's own. */
async function familyTemplate(
  family: TitoFamily,
  directory: string,
  config: Record<string, unknown>,
  overridePath: string | undefined,
): Promise<[ChatTemplateRenderer, string]> {
  if (overridePath !== undefined) return [await templateFile(overridePath, family.template.kind, config), `template override via TITO: ${overridePath}`];
  if (family.template.kind === "bundled") {
    const file = family.template.file;
    return [parsed(() => ChatTemplate.fromFile(path.join(path.dirname(qwen3TemplatePath()), file)), file), `fixed template via TITO: ${file}`];
  }
  return [await nativeTemplate(directory, config), `checkpoint via TITO: ${directory}`];
}

/**
 * The family's side of a plan, from the registry's data: its template, pinned kwargs (auto-set when the user gave
 * none), append roles, trailing ids and merge rule (src/tokenizer's FamilyTito, the server's own TITO).
 */
async function familyPlan(
  family: TitoFamily,
  directory: string,
  config: Record<string, unknown>,
  overridePath: string | undefined,
  thinking: ThinkingMode,
  userKwargs: ChatTemplateKwargs,
): Promise<TemplateVerifyPlan> {
  const [template, source] = await familyTemplate(family, directory, config, overridePath);
  const tokenizerFile = path.join(directory, "tokenizer.json");
  const tokenizerJson = await readJson(tokenizerFile);
  let tokenizer: CheckpointTokenizer;
  let tito: FamilyTito;
  try {
    tokenizer = new CheckpointTokenizer(tokenizerJson, config, tokenizerFile, template, family.name);
    tito = new FamilyTito(tokenizer, {}, { eosToken: typeof config.eos_token === "string" ? config.eos_token : undefined }, family);
  } catch (error) {
    throw new TemplateVerifyLoadError(`--tito-model ${family.name}: ${describe(error)}`);
  }
  const trailingIds = new Set(family.boundary.trailing.map((ref) => resolveTokenRef(ref, { tokenizer }, family.name)));
  const autoSetKwargs: ChatTemplateKwargs = {};
  for (const [key, value] of Object.entries(family.pinnedKwargs)) if (!(key in userKwargs)) autoSetKwargs[key] = value;
  const templateKwargs = { ...userKwargs, ...autoSetKwargs };

  const build = (kwargs: ChatTemplateKwargs): TemplateVerifyFamily => {
    // layered as a request's kwargs are, so a conflict carries miles' TITOTokenizer.__init__ text
    let merged: ChatTemplateKwargs;
    try {
      merged = tito.mergeKwargs(kwargs);
    } catch (error) {
      throw new TemplateVerifyLoadError(`--chat-template-kwargs: ${describe(error)}`);
    }
    return {
      name: family.name,
      kwargs: merged,
      trailingIds,
      render: (messages, options) => tokenizer.renderChatTemplate(messages, { ...options, kwargs: merged }),
      encode: (text) => tokenizer.encode(text),
      decode: (ids) => tokenizer.decode(ids, { skipSpecialTokens: false }),
      mergeTokens: (prefix, full, ids, tools) => tito.mergeTokens(prefix, full, ids, tools, merged),
    };
  };
  // A pinned-kwarg conflict is a load problem, found before any case runs.
  build(templateKwargs);
  return {
    titoModel: family.name,
    templateSource: source,
    allowedAppendRoles: new Set(family.allowedAppendRoles),
    thinking,
    templateKwargs,
    autoSetKwargs,
    renderer: build,
    family: build,
  };
}
