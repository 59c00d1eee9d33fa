#!/usr/bin/env node
// Entry point of the `session-parity` command; each subcommand lives in its own module (mock, serve, run, fuzz, verify-template).
// Every command exits 0 on pass, 1 on a parity failure, 2 on a usage or server problem, with one line naming it.
import "./cli-peers";
import { Command } from "commander";
import { closestWord } from "./did-you-mean";
import { withCliConventions } from "./command-kit";
import { CliExit, EXIT_PASS, EXIT_USAGE, exitCodeOf } from "./exit-codes";
import { fuzzCommand } from "./fuzz-command";
import { mockCommand } from "./mock-command";
import { packageVersion } from "./package-version";
import { replayCommand } from "./replay-command";
import { runCommand } from "./run-command";
import { serveCommand } from "./serve-command";
import { verifyTemplateCommand } from "./verify-template-command";

/**
 * Builds the top-level program with every subcommand registered. Program options (`--version`, `--help`) are
 * read only before the subcommand name; a first word that names no command is a usage error (exit 2) whatever
 * flags follow it, so a misspelt `serv --version` never prints the version and exits 0.
 */
export function buildProgram(): Command {
  const program = new Command("session-parity")
    .description("reference session servers, a mock backend and parity runs for agentic-RL training payloads")
    .usage("[--version] [--help] <command> [flags]")
    .option("--version", "print the package version")
    .allowExcessArguments(true)
    .helpCommand(true)
    .enablePositionalOptions()
    .passThroughOptions()
    .action((options: { version?: boolean }, self: Command) => {
      const name = self.args[0];
      if (name !== undefined) {
        const names = program.commands.map((command) => command.name());
        const closest = closestWord(name, names);
        const hint = closest === null ? "" : `; did you mean ${closest}?`;
        program.error(`error: unknown command '${name}' (the commands are ${names.join(", ")})${hint}`, {
          exitCode: EXIT_USAGE,
          code: "commander.unknownCommand",
        });
      }
      if (options.version === true) {
        const output = program.configureOutput();
        if (output.writeOut !== undefined) output.writeOut(`${packageVersion()}\n`);
        else process.stdout.write(`${packageVersion()}\n`);
        throw new CliExit(EXIT_PASS, "--version", true);
      }
      program.help({ error: true });
    });
  withCliConventions(program, [
    "session-parity run",
    "session-parity mock --port 30000 & session-parity serve v1 --backend http://127.0.0.1:30000 --port 8001",
  ]);
  program.addCommand(mockCommand());
  program.addCommand(serveCommand());
  program.addCommand(runCommand());
  program.addCommand(fuzzCommand());
  program.addCommand(replayCommand());
  program.addCommand(verifyTemplateCommand());
  return program;
}

/**
 * A reader that closes stdout early (`session-parity run | head -4`) must not turn into an EPIPE stack trace: the
 * rest of the output is dropped and the command ends with the status its verdict gives.
 */
function ignoreClosedStdout(): void {
  process.stdout.on("error", (error: NodeJS.ErrnoException) => {
    if (error.code !== "EPIPE") throw error;
  });
}

/**
 * Runs the command line on `argv` (node's own form: the node binary and a script path first), as the bin does;
 * `npm run parity` calls it after making sure the compiled files are current (scripts/parity.js).
 */
export function runCli(argv: readonly string[]): void {
  ignoreClosedStdout();
  buildProgram()
    .parseAsync([...argv])
    .catch((error: unknown) => {
      if (!(error instanceof CliExit && error.reported)) console.error(`session-parity: ${(error as Error)?.message ?? String(error)}`);
      process.exit(exitCodeOf(error, EXIT_USAGE));
    });
}

if (require.main === module) runCli(process.argv);
