// The `session-parity verify-template` subcommand: is a chat template append-safe, and does the family's TITO reproduce it?
// Exit status 0 = every check passed, 1 = some check failed, 2 = a bad flag or a checkpoint/template/family that cannot load.
import { writeFile } from "node:fs/promises";
import { Command, InvalidArgumentError, Option } from "commander";
import { withCliConventions } from "./command-kit";
import { CliExit, EXIT_FAIL, EXIT_PASS, EXIT_USAGE } from "./exit-codes";
import { parseCheckpointDir, parseJsonPath } from "./run-options";
import { renderTemplateVerifyReport } from "./verify-template-report";
import type { ChatTemplateKwargs } from "../tokenizer/types";
import type { TemplateVerifyReport, ThinkingMode } from "../verify/types";

/** Parsed flags of `session-parity verify-template`. */
export interface VerifyTemplateCommandOptions {
  hfCheckpoint?: string;
  titoModel?: string;
  chatTemplatePath?: string;
  chatTemplateKwargs?: ChatTemplateKwargs;
  thinking: ThinkingMode;
  json?: string;
}

/** Where the command writes its report. */
export interface VerifyTemplateCommandIo {
  out: { write(chunk: string): unknown };
}

const DEFAULT_IO: VerifyTemplateCommandIo = { out: process.stdout };

/** `--chat-template-kwargs`: a JSON object. */
function parseTemplateKwargs(value: string): ChatTemplateKwargs {
  let parsed: unknown;
  try {
    parsed = JSON.parse(value);
  } catch (error) {
    throw new InvalidArgumentError(`must be a JSON object (${(error as Error).message})`);
  }
  if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed))
    throw new InvalidArgumentError("must be a JSON object such as '{\"enable_thinking\": true}'");
  return parsed as ChatTemplateKwargs;
}

/**
 * Runs the verification with parsed flags, prints the report and writes `--json` when asked.
 * @returns the exit status (0 all checks pass, 1 any fails) and the report
 * @throws CliExit with status 2 when the checkpoint, template or family cannot load, nothing is selected, or `--json` cannot be written
 */
export async function executeVerifyTemplate(
  options: VerifyTemplateCommandOptions,
  io: VerifyTemplateCommandIo = DEFAULT_IO,
): Promise<{ exitCode: number; report: TemplateVerifyReport }> {
  const { verifyTemplate, TemplateVerifyLoadError } = await import("../verify");
  let report: TemplateVerifyReport;
  try {
    report = await verifyTemplate({
      hfCheckpoint: options.hfCheckpoint,
      titoModel: options.titoModel,
      chatTemplatePath: options.chatTemplatePath,
      chatTemplateKwargs: options.chatTemplateKwargs,
      thinking: options.thinking,
    });
  } catch (error) {
    if (error instanceof TemplateVerifyLoadError || (error instanceof Error && error.name === "ChatTemplateError"))
      throw new CliExit(EXIT_USAGE, error.message);
    throw error;
  }
  if (report.results.length === 0) {
    throw new CliExit(
      EXIT_USAGE,
      `no trajectory fits append roles [${report.allowedAppendRoles.join(", ")}] with --thinking ${report.thinking}: nothing to verify`,
    );
  }
  io.out.write(renderTemplateVerifyReport(report));
  if (options.json !== undefined) {
    try {
      await writeFile(options.json, `${JSON.stringify(report, null, 2)}\n`);
    } catch (error) {
      throw new CliExit(EXIT_USAGE, `cannot write the --json report to ${options.json}: ${(error as Error).message}`);
    }
    io.out.write(`Full report written to ${options.json}\n`);
  }
  return { exitCode: report.summary.pass ? EXIT_PASS : EXIT_FAIL, report };
}

/** Builds the `verify-template` subcommand; its action sets `process.exitCode`. */
export function verifyTemplateCommand(io: VerifyTemplateCommandIo = DEFAULT_IO): Command {
  const command = new Command("verify-template")
    .description(
      "check that a chat template is append-only at every pretokenize position of the verifier's agent trajectories and, with --tito-model, that the family's TITO merge decodes to the canonical render",
    )
    .option(
      "--hf-checkpoint <dir>",
      "checkpoint directory with tokenizer.json and tokenizer_config.json (default: the packaged Qwen3 files)",
      parseCheckpointDir,
    )
    .option(
      "--tito-model <name>",
      "tokenizer family to verify through (a registered family: qwen3, default, ...); without it only the template's text layer is checked",
    )
    .option("--chat-template-path <file>", "a .jinja template that replaces the family's (or the checkpoint's) template")
    .option("--chat-template-kwargs <json>", "kwargs of every render as a JSON object, e.g. '{\"clear_thinking\": false}'", parseTemplateKwargs)
    .addOption(
      new Option(
        "--thinking <mode>",
        "off: non-thinking trajectories; on: thinking ones with enable_thinking true; both: all, with enable_thinking true and false",
      )
        .choices(["off", "on", "both"])
        .default("on"),
    )
    .option("--json <file>", "also write the structured report (every check, coverage, summary) as JSON", parseJsonPath)
    .action(async (options: VerifyTemplateCommandOptions) => {
      if (options.titoModel === undefined && options.hfCheckpoint === undefined && options.chatTemplatePath === undefined) {
        throw new CliExit(EXIT_USAGE, "give --tito-model, --hf-checkpoint or --chat-template-path: there is no template to verify otherwise");
      }
      const { exitCode } = await executeVerifyTemplate(options, io);
      process.exitCode = exitCode;
    });
  return withCliConventions(command, [
    "session-parity verify-template --tito-model qwen3",
    "session-parity verify-template --tito-model qwennext --thinking both --json verify.json",
  ]);
}
