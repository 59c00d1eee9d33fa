#!/usr/bin/env node
// Entry point of the `session-parity` command; each subcommand lives in its own module (mock, serve, run, fuzz, verify-template).
// Every command exits 0 on pass, 1 on a parity failure, 2 on a usage or server problem, with one line naming it.
import { Command } from "commander";
import { withCliConventions } from "./command-kit";
import { CliExit, EXIT_USAGE, exitCodeOf } from "./exit-codes";
import { fuzzCommand } from "./fuzz-command";
import { mockCommand } from "./mock-command";
import { packageVersion } from "./package-version";
import { runCommand } from "./run-command";
import { serveCommand } from "./serve-command";
import { verifyTemplateCommand } from "./verify-template-command";

/**
 * Builds the top-level program with every subcommand registered. Program options (`--version`, `--help`) are
 * read only before the subcommand name, so `serve --version v1` stays the server version flag.
 */
export function buildProgram(): Command {
  const program = new Command("session-parity")
    .description("reference session servers, a mock backend and parity runs for agentic-RL training payloads")
    .version(packageVersion(), "--version", "print the package version")
    .enablePositionalOptions();
  withCliConventions(program, [
    "session-parity run",
    "session-parity mock --port 30000 & session-parity serve --version v1 --backend http://127.0.0.1:30000 --port 8001",
  ]);
  program.addCommand(mockCommand());
  program.addCommand(serveCommand());
  program.addCommand(runCommand());
  program.addCommand(fuzzCommand());
  program.addCommand(verifyTemplateCommand());
  return program;
}

if (require.main === module) {
  buildProgram()
    .parseAsync(process.argv)
    .catch((error: unknown) => {
      if (!(error instanceof CliExit && error.reported)) console.error(`session-parity: ${(error as Error)?.message ?? String(error)}`);
      process.exit(exitCodeOf(error, EXIT_USAGE));
    });
}
