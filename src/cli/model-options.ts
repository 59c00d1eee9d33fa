// The model-choice flags shared by `serve`, `mock`, `run` and `fuzz`: --tito-model, --chat-template-path,
// --chat-template-kwargs (and the mock's --tool-call-parser); --hf-checkpoint is declared by each command.
import { existsSync, statSync } from "node:fs";
import * as path from "node:path";
import { Command, InvalidArgumentError, Option } from "commander";
import { getTitoFamily, titoFamilyNames } from "../tokenizer/families/registry";
import type { ChatTemplateKwargs } from "../tokenizer/types";
import { CHAT_TEMPLATE_SOURCES, DEFAULT_CHAT_TEMPLATE_KWARGS, MILES_KWARGS_FLAG, type ChatTemplateSource } from "../tokenizer/families/model-defaults";

/** The parsed model-choice flags. */
export interface ModelChoiceFlags {
  titoModel?: string;
  chatTemplatePath?: string;
  chatTemplateKwargs?: ChatTemplateKwargs;
  chatTemplate?: ChatTemplateSource;
  toolCallParser?: string;
}

/** The kwargs default the help of the servers, `run` and `fuzz` names: the package's one default, and miles' flag. */
export const SERVER_KWARGS_HELP = `${JSON.stringify(DEFAULT_CHAT_TEMPLATE_KWARGS).replace(/,/g, ", ").replace(/:/g, ": ")}; ${MILES_KWARGS_FLAG} for miles' own default`;

/** `--chat-template-kwargs`: a JSON object (miles' `--apply-chat-template-kwargs`, `type=json.loads`). */
function parseKwargsJson(value: string): ChatTemplateKwargs {
  let parsed: unknown;
  try {
    parsed = JSON.parse(value);
  } catch (error) {
    throw new InvalidArgumentError(`must be a JSON object such as '{"enable_thinking": false}' (${(error as Error).message})`);
  }
  if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) throw new InvalidArgumentError(`must be a JSON object, got ${value}`);
  return parsed as ChatTemplateKwargs;
}

/** `--tito-model`: a registered family (the refusal names the registered ones, and says when miles has the name). */
function parseTitoModel(value: string): string {
  try {
    return getTitoFamily(value).name;
  } catch (error) {
    throw new InvalidArgumentError((error as Error).message);
  }
}

/** `--chat-template-path`: an existing file (miles: `--chat-template-path file not found`). */
function parseTemplateFile(value: string): string {
  const file = path.resolve(value);
  if (!existsSync(file) || !statSync(file).isFile()) throw new InvalidArgumentError(`file not found: ${file}`);
  return file;
}

/**
 * Adds the model-choice flags. `kwargsDefault` describes the default of --chat-template-kwargs in the help text
 * ({@link SERVER_KWARGS_HELP} for servers and runs, `{}` for the mock).
 */
export function addModelOptions(command: Command, kwargsDefault: string, options: { toolCallParser?: boolean; env?: boolean } = {}): Command {
  const envNote = (name: string): string => (options.env === true ? `; env ${name}` : "");
  command
    .option(
      "--tito-model <family>",
      `TITO model family: ${titoFamilyNames().join(", ")} (miles' --tito-model; default qwen3${envNote("SESSION_PARITY_TITO_MODEL")})`,
      parseTitoModel,
    )
    .option(
      "--chat-template-path <file>",
      `a Jinja chat template replacing the checkpoint's (--tito-model default only${envNote("SESSION_PARITY_CHAT_TEMPLATE_PATH")})`,
      parseTemplateFile,
    )
    .option(
      "--chat-template-kwargs <json>",
      `default chat-template kwargs as a JSON object (miles' --apply-chat-template-kwargs; default ${kwargsDefault}${envNote("SESSION_PARITY_CHAT_TEMPLATE_KWARGS")})`,
      parseKwargsJson,
    )
    .addOption(
      new Option(
        "--chat-template <source>",
        `template source: family (the family's registered template, miles' production) or checkpoint (the checkpoint's own template under the family's rules, as miles' test helper _serve_session runs it; default family${envNote("SESSION_PARITY_CHAT_TEMPLATE")})`,
      ).choices(CHAT_TEMPLATE_SOURCES),
    );
  if (options.toolCallParser === true) {
    command.option(
      "--tool-call-parser <name>",
      `the mock's SGLang tool-call parser for families that bind none (default qwen25; must match the family's when it binds one${envNote("SESSION_PARITY_TOOL_CALL_PARSER")})`,
    );
  }
  return command;
}
