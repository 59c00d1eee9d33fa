// Turns a model choice (--tito-model, --hf-checkpoint, --chat-template-path, kwargs) into a started model: the
// checkpoint's vocabulary, the family's template and TITO rules. Every refusal names family, file and missing piece.
import * as fs from "node:fs";
import * as path from "node:path";
import { ChatTemplate } from "./chat-template";
import { DEEPSEEK_MODEL_TYPES, DeepSeekEncoderRenderer, type DeepSeekEncoderName } from "./deepseek/encoder-renderer";
import type { ChatTemplateRenderer, CheckpointTokenizer } from "./checkpoint-tokenizer";
import { INKLING_FAMILY, INKLING_MODEL_TYPES } from "./families/inkling";
import { DEFAULT_TITO_MODEL, getTitoFamily } from "./families/registry";
import { checkChatTemplateSource, DEFAULT_CHAT_TEMPLATE_SOURCE, type ChatTemplateSource } from "./families/model-defaults";
import { TitoModelError, type LoadedModelInfo, type ModelChoice, type TitoFamily } from "./families/types";
import { loadCheckpoint, TokenizerLoadError, type CheckpointFiles } from "./load";
import { NativeChatTemplate, specialTokenVariables } from "./native-template";
import { FamilyTito, TitoError, type TitoOptions } from "./tito";
import { sharedTitoRenderCaches } from "./tito-render-caches";
import type { ChatMessage, ChatTemplateKwargs, ToolSpec } from "./types";

/** A started model: the tokenizer rendering the family's template, its TITO rules, and where each came from. */
export interface LoadedModel extends LoadedModelInfo {
  /** The checkpoint's vocabulary rendering the family's template. */
  readonly tokenizer: CheckpointTokenizer;
  /** The family's TITO rules over it, with the server default kwargs. */
  readonly tito: FamilyTito;
  /** The checkpoint's `eos_token` text (the mock's stop token for families that name `{eos: true}`). */
  readonly eosToken: string | undefined;
}

/** Options of {@link loadTitoModel}: the model choice plus how TITO renders are memoized. */
export interface LoadTitoModelOptions extends ModelChoice {
  /** Passed to the TITO rules (session servers memoize renders). */
  tito?: Omit<TitoOptions, "eosToken">;
  /**
   * Render through the process-wide caches of every model loaded with this option over the same checkpoint, template
   * and family (`sharedTitoRenderCaches`), unless `tito.renderCaches` names others. Session servers of one process
   * (an embedded v1 and v2) then render each conversation once.
   */
  shareRenderCaches?: boolean;
}

const bundledTemplates = new Map<string, ChatTemplate>();

/** A template the package ships, next to this module (copied into dist on build), parsed once per process. */
function bundledTemplate(file: string): ChatTemplate {
  let template = bundledTemplates.get(file);
  if (template === undefined) {
    template = ChatTemplate.fromFile(path.join(__dirname, file));
    bundledTemplates.set(file, template);
  }
  return template;
}

function checkTemplateSource(family: string, value: unknown): ChatTemplateSource {
  try {
    return checkChatTemplateSource(value, "--chat-template");
  } catch (error) {
    throw new TitoModelError("bad-template-source", family, (error as Error).message);
  }
}

/**
 * The renderer of a `bundled`-template family: a verbatim miles template renders as transformers renders it (with
 * this checkpoint's special-token variables), the package's own append-safe ones with their host helpers.
 */
function bundledRenderer(family: TitoFamily, source: Extract<TitoFamily["template"], { kind: "bundled" }>, files: CheckpointFiles): ChatTemplateRenderer {
  if (source.verbatim !== true) return bundledTemplate(source.file);
  const file = path.join(__dirname, source.file);
  let text: string;
  try {
    text = fs.readFileSync(file, "utf8");
  } catch (error) {
    throw new TitoModelError(
      "missing-template",
      family.name,
      `--tito-model ${family.name}: cannot read the bundled template ${source.file} (${(error as Error).message})`,
      source.file,
    );
  }
  return parseNative(family, text, file, specialTokenVariables(files.config));
}

function checkKwargs(family: string, kwargs: unknown): ChatTemplateKwargs {
  if (kwargs === undefined || kwargs === null) return {};
  if (typeof kwargs !== "object" || Array.isArray(kwargs)) {
    throw new TitoModelError("bad-kwargs", family, `--chat-template-kwargs must be a JSON object, got ${Array.isArray(kwargs) ? "an array" : typeof kwargs}`);
  }
  return kwargs as ChatTemplateKwargs;
}

/** The renderer of a `checkpoint`-template family: --chat-template-path, else the checkpoint's own. */
function checkpointTemplate(
  family: TitoFamily,
  files: CheckpointFiles,
  chatTemplatePath: string | undefined,
): { renderer: ChatTemplateRenderer; origin: string } {
  const specials = specialTokenVariables(files.config);
  if (chatTemplatePath !== undefined) {
    let text: string;
    try {
      text = fs.readFileSync(chatTemplatePath, "utf8");
    } catch (error) {
      const why = (error as NodeJS.ErrnoException).code === "ENOENT" ? "file not found" : (error as Error).message;
      throw new TitoModelError("missing-file", family.name, `--chat-template-path file not found: ${chatTemplatePath} (${why})`, chatTemplatePath);
    }
    return { renderer: parseNative(family, text, chatTemplatePath, specials), origin: path.basename(chatTemplatePath) };
  }
  if (files.chatTemplate === null) {
    throw new TitoModelError(
      "missing-template",
      family.name,
      `--tito-model ${family.name}: checkpoint ${files.directory} has no chat template (no "chat_template" in tokenizer_config.json and no chat_template.jinja); ` +
        `the ${family.name} family renders the checkpoint's own template${family.acceptsChatTemplatePath ? " (or pass --chat-template-path)" : ""}`,
      "tokenizer_config.json",
    );
  }
  const origin = path.join(files.directory, files.chatTemplate.file);
  return { renderer: parseNative(family, files.chatTemplate.text, origin, specials), origin: files.chatTemplate.file };
}

/**
 * The family's renderer: an encoder family's DeepSeek encoder (refused when the checkpoint's config.json declares
 * another model type), a bundled template, or the checkpoint's own, except that a checkpoint whose config.json names
 * a DeepSeek encoder model type renders through that encoder whatever the family (miles' `apply_chat_template`
 * routes it so before looking at any template).
 */
function familyTemplate(
  family: TitoFamily,
  files: CheckpointFiles,
  chatTemplatePath: string | undefined,
  source: ChatTemplateSource,
): { renderer: ChatTemplateRenderer; origin: string } {
  const modelType = readModelType(files.directory);
  if (family.template.kind === "encoder") {
    const wanted = family.template.encoder;
    if (modelType !== "" && modelType !== wanted) {
      throw new TitoModelError(
        "missing-template",
        family.name,
        `--tito-model ${family.name}: checkpoint ${files.directory} declares model_type ${JSON.stringify(modelType)} in config.json; ` +
          `the ${family.name} family renders with DeepSeek's official encoder, which miles routes to by model_type ${JSON.stringify(wanted)}`,
        "config.json",
      );
    }
    const renderer = new DeepSeekEncoderRenderer(wanted);
    return { renderer, origin: renderer.origin };
  }
  if ((DEEPSEEK_MODEL_TYPES as readonly string[]).includes(modelType)) {
    const renderer = new DeepSeekEncoderRenderer(modelType as DeepSeekEncoderName);
    return { renderer, origin: renderer.origin };
  }
  // miles' apply_chat_template renders any Inkling checkpoint (config.json model_type) with the Inkling fixed template
  const template = family.template.kind === "checkpoint" && INKLING_MODEL_TYPES.includes(modelType) ? INKLING_FAMILY.template : family.template;
  if (template.kind === "bundled" && source === "family") return { renderer: bundledRenderer(family, template, files), origin: path.basename(template.file) };
  return checkpointTemplate(family, files, chatTemplatePath);
}

/**
 * `model_type` of the checkpoint's config.json, or "" when the file is missing, unreadable, not an object or has none
 * (miles' `deepseek._read_model_type`).
 */
export function readModelType(directory: string): string {
  let config: unknown;
  try {
    config = JSON.parse(fs.readFileSync(path.join(directory, "config.json"), "utf8"));
  } catch {
    return "";
  }
  if (config === null || typeof config !== "object" || Array.isArray(config)) return "";
  const modelType = (config as Record<string, unknown>).model_type;
  return typeof modelType === "string" ? modelType : "";
}

function parseNative(family: TitoFamily, text: string, origin: string, specials: ReturnType<typeof specialTokenVariables>): NativeChatTemplate {
  try {
    return new NativeChatTemplate(text, origin, specials);
  } catch (error) {
    throw new TitoModelError("missing-template", family.name, `--tito-model ${family.name}: ${(error as Error).message}`, path.basename(origin));
  }
}

/**
 * Starts a model choice: looks the family up, reads the checkpoint (cached per directory), resolves the template
 * (the family's bundled one unless `chatTemplate` is `checkpoint`, else the checkpoint's own / --chat-template-path), checks every token the family names
 * and builds its TITO rules with the server default kwargs (default `{}`, miles' `--apply-chat-template-kwargs`).
 * @throws TitoModelError naming the family, the file and the missing piece (unknown family, unreadable checkpoint
 * file, missing template or token, a refused --chat-template-path, kwargs that are not an object or contradict a
 * pinned one)
 */
export async function loadTitoModel(options: LoadTitoModelOptions = {}): Promise<LoadedModel> {
  const family = getTitoFamily(options.titoModel ?? DEFAULT_TITO_MODEL);
  if (options.chatTemplatePath !== undefined && !family.acceptsChatTemplatePath) {
    // miles/utils/arguments.py (31f1ca96): a named family is one fixed renderer contract
    throw new TitoModelError(
      "template-path-refused",
      family.name,
      `--chat-template-path cannot override the template registered for --tito-model=${family.name}; use --tito-model=default for a custom template`,
      options.chatTemplatePath,
    );
  }
  const source = options.chatTemplate === undefined ? DEFAULT_CHAT_TEMPLATE_SOURCE : checkTemplateSource(family.name, options.chatTemplate);
  if (options.chatTemplatePath !== undefined && source === "checkpoint") {
    throw new TitoModelError(
      "template-path-refused",
      family.name,
      `--chat-template checkpoint and --chat-template-path name two different templates; pass only one`,
      options.chatTemplatePath,
    );
  }
  const defaults = checkKwargs(family.name, options.chatTemplateKwargs);
  let files: CheckpointFiles;
  try {
    files = await loadCheckpoint({ hfCheckpoint: options.hfCheckpoint });
  } catch (error) {
    if (!(error instanceof TokenizerLoadError)) throw error;
    throw new TitoModelError("missing-file", family.name, `--tito-model ${family.name}: ${error.message}`);
  }
  const { renderer, origin } = familyTemplate(family, files, options.chatTemplatePath, source);
  const tokenizer = files.tokenizer.withChatTemplate(renderer, family.name);
  const eosToken = files.tokenizer.eosToken;
  let tito: FamilyTito;
  try {
    // DeepSeek V4's real-history suffix from the appended tail alone (its encoder renders each turn from its neighbours)
    const historySuffix =
      renderer instanceof DeepSeekEncoderRenderer
        ? (older: readonly ChatMessage[], newer: readonly ChatMessage[], tools: readonly ToolSpec[] | null, kwargs: ChatTemplateKwargs) =>
            renderer.renderHistorySuffix(older, newer, { tools, kwargs })
        : undefined;
    const renderCaches =
      options.tito?.renderCaches ?? (options.shareRenderCaches === true ? sharedTitoRenderCaches(files.tokenizer, renderer, family.name) : undefined);
    tito = new FamilyTito(tokenizer, defaults, { ...options.tito, renderCaches, eosToken, historySuffix }, family);
  } catch (error) {
    if (error instanceof TitoError) throw new TitoModelError("bad-kwargs", family.name, error.message);
    throw error;
  }
  // what is in force: a family whose registered template is the checkpoint's reports `checkpoint` either way
  const templateSource = options.chatTemplatePath !== undefined ? "path" : family.template.kind === "checkpoint" ? "checkpoint" : source;
  return { family, checkpoint: files.directory, templateOrigin: origin, templateSource, tokenizer, tito, eosToken };
}
