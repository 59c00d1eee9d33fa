// Conventions every `session-parity` subcommand shares: exit statuses, the help example, shutdown on signals.
// A new command (one module in src/cli) calls withCliConventions once and gets the same behaviour as the others.
import { Command, CommanderError } from "commander";
import { CliExit, EXIT_PASS, EXIT_USAGE } from "./exit-codes";

/** The exit-status line every command's `--help` ends with. */
const EXIT_STATUS_HELP = "Exit status: 0 pass, 1 parity failure (the payloads differ), 2 usage or server problem.";

/**
 * Applies the shared conventions to `command`: parse errors (unknown flag, bad value, missing option) reject
 * with a {@link CliExit} of status 2, `--help` resolves with status 0, and the help ends with `examples` and
 * the exit statuses. Returns the same command.
 */
export function withCliConventions(command: Command, examples: readonly string[]): Command {
  const lines = examples.map((example) => `  $ ${example}`).join("\n");
  const ports = [...new Set(examples.flatMap((example) => [...example.matchAll(/(?:127\.0\.0\.1:|--port )(\d+)/g)].map((match) => match[1])))];
  const portsNote =
    ports.length === 0 ? "" : `\nAny free port will do for ${ports.length === 1 ? ports[0] : `${ports.slice(0, -1).join(", ")} and ${ports.at(-1)}`}.\n`;
  const invocation = command.name() === "session-parity" ? "session-parity" : `session-parity ${command.name()}`;
  return command
    .showHelpAfterError(`(run \`${invocation} --help\` for the flags)`)
    .addHelpText("after", `\nExample${examples.length === 1 ? "" : "s"}:\n${lines}\n${portsNote}\n${EXIT_STATUS_HELP}`)
    .exitOverride((error: CommanderError) => {
      throw new CliExit(error.exitCode === 0 ? EXIT_PASS : EXIT_USAGE, error.message, true);
    });
}

/** A long-running process's shutdown: SIGINT/SIGTERM run `close` once, then exit 0 (1 when closing failed). */
export function closeOnSignals(close: () => Promise<void>, what: string): void {
  let stopping = false;
  const stop = (signal: NodeJS.Signals): void => {
    if (stopping) return;
    stopping = true;
    close().then(
      () => process.exit(EXIT_PASS),
      (error: unknown) => {
        console.error(`session-parity: error while closing the ${what} on ${signal}: ${(error as Error).message}`);
        process.exit(1);
      },
    );
  };
  process.once("SIGINT", stop);
  process.once("SIGTERM", stop);
}
