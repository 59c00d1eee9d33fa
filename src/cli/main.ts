#!/usr/bin/env node
// Entry point of the `session-parity` command; each subcommand lives in its own module (serve, run).
// Errors print one line naming the problem and exit with status 1 (`run` carries its own status, 2 for usage errors).
import { Command } from "commander";
import { CliExit, exitCodeOf } from "./exit-codes";
import { fuzzCommand } from "./fuzz-command";
import { runCommand } from "./run-command";
import { serveCommand } from "./serve-command";

/** Builds the top-level program with every subcommand registered. */
export function buildProgram(): Command {
  const program = new Command("session-parity")
    .description("reference session servers and parity runs for agentic-RL training payloads")
    .showHelpAfterError();
  program.addCommand(serveCommand());
  program.addCommand(runCommand());
  program.addCommand(fuzzCommand());
  return program;
}

if (require.main === module) {
  buildProgram()
    .parseAsync(process.argv)
    .catch((error: unknown) => {
      if (!(error instanceof CliExit && error.reported)) console.error(`session-parity: ${(error as Error)?.message ?? String(error)}`);
      process.exit(exitCodeOf(error));
    });
}
