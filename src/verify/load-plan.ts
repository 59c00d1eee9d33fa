// Builds a verification plan from the command's inputs: reads the checkpoint, the template and the family.
// The I/O edge of the verifier: the model comes from the tokenizer's loadTitoModel, as the servers load it.
import { promises as fsp } from "node:fs";
import * as path from "node:path";
import { ChatTemplate } from "../tokenizer/chat-template";
import type { ChatTemplateRenderer, CheckpointTokenizer } from "../tokenizer/checkpoint-tokenizer";
import { getTitoFamily } from "../tokenizer/families/registry";
import type { TitoFamily } from "../tokenizer/families/types";
import { loadTitoModel, type LoadedModel } from "../tokenizer/family-load";
import { loadCheckpoint, type CheckpointFiles } from "../tokenizer/load";
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

async function checkpoint(hfCheckpoint: string | undefined): Promise<CheckpointFiles> {
  try {
    return await loadCheckpoint({ hfCheckpoint });
  } catch (error) {
    throw new TemplateVerifyLoadError(describe(error));
  }
}

function parsed(build: () => ChatTemplateRenderer, file: string): ChatTemplateRenderer {
  try {
    return build();
  } catch (error) {
    throw new TemplateVerifyLoadError(`${path.basename(file)}: ${describe(error)}`);
  }
}

/** A `--chat-template-path` file, rendered the way the family's own template kind is (bundled helpers, or transformers'). */
async function templateFile(file: string, kind: "bundled" | "checkpoint", config: Readonly<Record<string, unknown>>): Promise<ChatTemplateRenderer> {
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
  if (options.titoModel === undefined) {
    const files = await checkpoint(options.hfCheckpoint);
    let template: ChatTemplateRenderer;
    if (options.chatTemplatePath !== undefined) template = await templateFile(options.chatTemplatePath, "checkpoint", files.config);
    else if (files.chatTemplate !== null) {
      const { text, file } = files.chatTemplate;
      template = parsed(() => new NativeChatTemplate(text, path.join(files.directory, file), specialTokenVariables(files.config)), file);
    } else {
      throw new TemplateVerifyLoadError(
        `checkpoint ${files.directory} has no chat template (no "chat_template" in tokenizer_config.json and no chat_template.jinja)`,
      );
    }
    return {
      titoModel: null,
      templateSource:
        options.chatTemplatePath !== undefined ? `file: ${options.chatTemplatePath}` : `checkpoint: ${path.join(files.directory, files.chatTemplate!.file)}`,
      allowedAppendRoles: new Set(ALL_APPEND_ROLES),
      thinking,
      templateKwargs: { ...userKwargs },
      renderer: (kwargs) => renderTarget(template, kwargs),
    };
  }
  let family: TitoFamily;
  let model: LoadedModel;
  try {
    family = getTitoFamily(options.titoModel);
    // a named family refuses --chat-template-path on the servers; the verifier checks an override through it anyway
    // (miles' verify_chat_template.py: "template override via TITO"), so it is applied below
    const passPath = family.acceptsChatTemplatePath ? options.chatTemplatePath : undefined;
    model = await loadTitoModel({ titoModel: family.name, hfCheckpoint: options.hfCheckpoint, chatTemplatePath: passPath });
  } catch (error) {
    throw new TemplateVerifyLoadError(describe(error));
  }
  let tokenizer: CheckpointTokenizer = model.tokenizer;
  let tito: FamilyTito = model.tito;
  let source =
    options.chatTemplatePath !== undefined
      ? `template override via TITO: ${options.chatTemplatePath}`
      : `${family.template.kind === "bundled" ? "fixed template" : family.template.kind === "encoder" ? "encoder" : "checkpoint"} via TITO: ${model.templateOrigin}`;
  if (options.chatTemplatePath !== undefined && !family.acceptsChatTemplatePath) {
    const config = (await checkpoint(options.hfCheckpoint)).config;
    tokenizer = tokenizer.withChatTemplate(
      await templateFile(options.chatTemplatePath, family.template.kind === "bundled" ? "bundled" : "checkpoint", config),
      family.name,
    );
    tito = new FamilyTito(tokenizer, {}, { eosToken: model.eosToken }, family);
    source = `template override via TITO: ${options.chatTemplatePath}`;
  }
  return familyPlan(family, tokenizer, tito, source, thinking, userKwargs);
}

/**
 * The family's side of a plan, from the registry's data: its template, pinned kwargs (auto-set when the user gave
 * none), append roles, trailing ids and merge rule (src/tokenizer's FamilyTito, the servers' own TITO).
 */
function familyPlan(
  family: TitoFamily,
  tokenizer: CheckpointTokenizer,
  tito: FamilyTito,
  source: string,
  thinking: ThinkingMode,
  userKwargs: ChatTemplateKwargs,
): TemplateVerifyPlan {
  const present = family.boundary.trailing.filter((ref) => !("token" in ref && ref.optional === true && tokenizer.tokenToId(ref.token) === undefined));
  const trailingIds = new Set(present.map((ref) => resolveTokenRef(ref, { tokenizer }, family.name)));
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
