#!/usr/bin/env node
// Entry point of the `session-parity` command; each subcommand lives in its own module (serve now, run later).
// Errors print one line naming the problem and exit with status 1.
import { Command } from "commander";
import { serveCommand } from "./serve-command";

/** Builds the top-level program with every subcommand registered. */
export function buildProgram(): Command {
  const program = new Command("session-parity")
    .description("reference session servers and parity runs for agentic-RL training payloads")
    .showHelpAfterError();
  program.addCommand(serveCommand());
  return program;
}

if (require.main === module) {
  buildProgram()
    .parseAsync(process.argv)
    .catch((error: unknown) => {
      console.error(`session-parity: ${(error as Error)?.message ?? String(error)}`);
      process.exit(1);
    });
}
