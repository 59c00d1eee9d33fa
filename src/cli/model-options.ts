// The model-choice flags shared by `serve`, `mock`, `run` and `fuzz`: --tito-model, --chat-template-path,
// --chat-template-kwargs (and the mock's --tool-call-parser); --hf-checkpoint is declared by each command.
import { existsSync, statSync } from "node:fs";
import * as path from "node:path";
import { Command, InvalidArgumentError, Option } from "commander";
import { titoFamilyNames } from "../tokenizer/families/registry";
import type { ChatTemplateKwargs } from "../tokenizer/types";

/** The parsed model-choice flags. */
export interface ModelChoiceFlags {
  titoModel?: string;
  chatTemplatePath?: string;
  chatTemplateKwargs?: ChatTemplateKwargs;
  toolCallParser?: string;
}

/** `--chat-template-kwargs`: a JSON object (miles' `--apply-chat-template-kwargs`, `type=json.loads`). */
export function parseKwargsJson(value: string): ChatTemplateKwargs {
  let parsed: unknown;
  try {
    parsed = JSON.parse(value);
  } catch (error) {
    throw new InvalidArgumentError(`must be a JSON object such as '{"enable_thinking": false}' (${(error as Error).message})`);
  }
  if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) throw new InvalidArgumentError(`must be a JSON object, got ${value}`);
  return parsed as ChatTemplateKwargs;
}

/** `--chat-template-path`: an existing file (miles: `--chat-template-path file not found`). */
function parseTemplateFile(value: string): string {
  const file = path.resolve(value);
  if (!existsSync(file) || !statSync(file).isFile()) throw new InvalidArgumentError(`file not found: ${file}`);
  return file;
}

/**
 * Adds the model-choice flags. `kwargsDefault` describes the default of --chat-template-kwargs in the help text
 * (`{}` for servers, the fixture's `{"enable_thinking": false}` for runs).
 */
export function addModelOptions(command: Command, kwargsDefault: string, options: { toolCallParser?: boolean; env?: boolean } = {}): Command {
  const envNote = (name: string): string => (options.env === true ? `; env ${name}` : "");
  command
    .addOption(
      new Option("--tito-model <family>", `TITO model family (miles' --tito-model; default qwen3${envNote("SESSION_PARITY_TITO_MODEL")})`).choices(
        titoFamilyNames(),
      ),
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
    );
  if (options.toolCallParser === true) {
    command.option(
      "--tool-call-parser <name>",
      `the mock's SGLang tool-call parser for families that bind none (default qwen25; must match the family's when it binds one${envNote("SESSION_PARITY_TOOL_CALL_PARSER")})`,
    );
  }
  return command;
}
