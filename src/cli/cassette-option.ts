// `--cassette FILE` for every command that takes a backend (`mock`, `run`, `fuzz`, `replay`): one flag, one parser,
// one way to start the cassette backend, so each command only adds the option and calls startCassetteFromFlag.
import * as path from "node:path";
import { existsSync, statSync } from "node:fs";
import { type Command, InvalidArgumentError } from "commander";
import type { CassetteBackend } from "../backend/cassette-backend";
import { CliExit, EXIT_USAGE } from "./exit-codes";

/** `--cassette`: an existing file (a cassette to replay). */
export function parseCassetteFile(value: string): string {
  const file = path.resolve(value);
  if (!existsSync(file))
    throw new InvalidArgumentError(`no such file: ${file} (record one with: session-parity mock --record ${value} --upstream <your SGLang URL>)`);
  if (!statSync(file).isFile()) throw new InvalidArgumentError(`${file} is not a file`);
  return file;
}

/** `--record`: a file whose directory exists (created with its header when missing, appended to otherwise). */
export function parseRecordFile(value: string): string {
  const file = path.resolve(value);
  const dir = path.dirname(file);
  if (!existsSync(dir) || !statSync(dir).isDirectory()) throw new InvalidArgumentError(`the directory ${dir} does not exist`);
  if (existsSync(file) && !statSync(file).isFile()) throw new InvalidArgumentError(`${file} is not a file`);
  return file;
}

/** Adds `--cassette <file>` to a command that otherwise takes `--backend <url>`. */
export function addCassetteOption(command: Command): Command {
  return command.option(
    "--cassette <file>",
    "replay a cassette as the backend (recorded with `session-parity mock --record`; a request it lacks is answered 404 naming it, never invented); excludes --backend",
    parseCassetteFile,
  );
}

/** The flags {@link startCassetteFromFlags} reads. */
export interface CassetteFlags {
  /** A cassette to replay. */
  cassette?: string;
  /** A cassette to record into (with `upstream`). */
  record?: string;
  /** The backend recorded from. */
  upstream?: string;
  /** The model choice the cassette's vocabulary must match. */
  titoModel?: string;
  hfCheckpoint?: string;
  host?: string;
  port?: number;
}

/**
 * Starts the cassette backend the flags ask for (replay `--cassette`, or record `--record` through `--upstream`).
 * @throws CliExit (status 2) naming the flag misuse or the cassette's refusal
 */
export async function startCassetteFromFlags(flags: CassetteFlags, warn?: (message: string) => void): Promise<CassetteBackend> {
  if (flags.cassette !== undefined && (flags.record !== undefined || flags.upstream !== undefined)) {
    throw new CliExit(EXIT_USAGE, "--cassette replays a cassette; --record with --upstream records one: give one or the other");
  }
  if ((flags.record === undefined) !== (flags.upstream === undefined)) {
    throw new CliExit(
      EXIT_USAGE,
      flags.record !== undefined ? "--record needs --upstream <URL of the backend to record>" : "--upstream needs --record <cassette file>",
    );
  }
  const file = flags.cassette ?? flags.record;
  if (file === undefined) throw new CliExit(EXIT_USAGE, "no cassette flag given");
  const { startCassetteBackend } = await import("../backend/cassette-backend");
  try {
    return await startCassetteBackend({
      cassette: file,
      upstream: flags.upstream,
      titoModel: flags.titoModel,
      hfCheckpoint: flags.hfCheckpoint,
      host: flags.host,
      port: flags.port,
      warn: warn ?? ((message) => console.error(`session-parity: warning: ${message}`)),
    });
  } catch (error) {
    throw new CliExit(EXIT_USAGE, `could not start the cassette backend: ${(error as Error).message}`);
  }
}
