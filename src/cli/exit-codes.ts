// Exit statuses of the `session-parity` command and the error that carries one up to the entry point.
// The same for every command: 0 pass, 1 parity failure (payloads differ), 2 a usage or server problem.

/** Every trajectory pair passed every check. */
export const EXIT_PASS = 0;
/** At least one trajectory pair failed a check. */
export const EXIT_FAIL = 1;
/** A bad flag, or a server that could not be started or reached, or that failed during a run (5xx, no reply). */
export const EXIT_USAGE = 2;

/** An error that ends the command with a given exit status. */
export class CliExit extends Error {
  /**
   * @param exitCode status the process exits with
   * @param message one line naming the flag or the server at fault
   * @param reported true when the message was already printed (commander prints its own parse errors)
   */
  constructor(
    readonly exitCode: number,
    message: string,
    readonly reported = false,
  ) {
    super(message);
    this.name = "CliExit";
  }
}

/** The exit status for any error reaching the entry point: a {@link CliExit}'s own, else `fallback`. */
export function exitCodeOf(error: unknown, fallback = 1): number {
  return error instanceof CliExit ? error.exitCode : fallback;
}
