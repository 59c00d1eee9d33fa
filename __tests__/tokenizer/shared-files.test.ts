// The worker's tokenizer store that jest.environment.ts lends every test file: one parse and one library build per
// checkpoint, re-read when the files change on disk, and never the source of an error a user sees.
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { Tokenizer as HfTokenizer } from "@huggingface/tokenizers";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { defaultTokenizerDirectory, loadTokenizer, TokenizerLoadError, type Qwen3Tokenizer } from "../../src/tokenizer";
import { buildByteLevelTable, vocabularyFromLibrary, type ByteLevelTable } from "../../src/tokenizer/byte-level-decoder";
import { CheckpointTokenizer } from "../../src/tokenizer/checkpoint-tokenizer";
import { sharedTokenizerFiles, type SharedTokenizerFiles } from "../../src/tokenizer/shared-files";
import { vocabularySize } from "../../src/tokenizer/vocabulary-size";

const TEXT = "<|im_start|>user\nWhat's the weather in Beijing?<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n";

let store: SharedTokenizerFiles;
let scratch: string;

beforeAll(() => {
  const lent = sharedTokenizerFiles();
  if (lent === undefined) throw new Error("this suite runs under the package's jest.environment.ts, which lends the store");
  store = lent;
  scratch = fs.mkdtempSync(path.join(os.tmpdir(), "tokenizer-shared-"));
});

afterAll(() => {
  fs.rmSync(scratch, { recursive: true, force: true });
});

/** The library tokenizer a Qwen3Tokenizer wraps (a private field, read here to prove where it came from). */
const libraryOf = (tokenizer: Qwen3Tokenizer): unknown => (tokenizer as unknown as { hf: unknown }).hf;

function copiedCheckpoint(name: string): string {
  const dir = path.join(scratch, name);
  fs.mkdirSync(dir);
  for (const file of ["tokenizer.json", "tokenizer_config.json"]) fs.copyFileSync(path.join(defaultTokenizerDirectory(), file), path.join(dir, file));
  return dir;
}

describe("the packaged checkpoint", () => {
  it("is parsed once per worker: the same objects on every call, and the library tokenizer built from them", async () => {
    const first = await store.files(defaultTokenizerDirectory());
    const second = await store.files(defaultTokenizerDirectory());
    expect(first).not.toBeNull();
    expect(second!.tokenizerJson).toBe(first!.tokenizerJson);
    expect(store.libraryTokenizer(first!.tokenizerJson)).toBeDefined();
    expect(store.libraryTokenizer({ ...first!.tokenizerJson })).toBeUndefined();
  });

  it("lends loadTokenizer its library tokenizer, whose ids equal a freshly built one's", async () => {
    const tokenizer = await loadTokenizer();
    const files = (await store.files(defaultTokenizerDirectory()))!;
    expect(libraryOf(tokenizer)).toBe(store.libraryTokenizer(files.tokenizerJson));
    const fresh = new HfTokenizer(files.tokenizerJson, files.tokenizerConfig);
    expect(tokenizer.encode(TEXT)).toEqual(fresh.encode(TEXT, { add_special_tokens: false }).ids);
    expect(tokenizer.decode(tokenizer.encode(TEXT))).toBe(TEXT);
  });
});

/** The bytes of a typed array (the lent tables come from the worker's realm, this file's from its own). */
const bytesOf = (view: ArrayBufferView): Buffer => Buffer.from(view.buffer, view.byteOffset, view.byteLength);

/** The table a tokenizer's decoder reads (private fields, read here to prove where they came from). */
function tableOf(tokenizer: CheckpointTokenizer): ByteLevelTable {
  tokenizer.decode([0]);
  return (tokenizer as unknown as { tableDecoder: ByteLevelTable }).tableDecoder;
}

describe("the tables derived from the packaged checkpoint", () => {
  it("are the ones this file would compute itself: the vocabulary size and every decoder table, byte for byte", async () => {
    const files = (await store.files(defaultTokenizerDirectory()))!;
    const lent = store.derived!(files.tokenizerJson, files.tokenizerConfig)!;
    expect(lent).toBeDefined();
    expect(lent.vocabSize()).toBe(vocabularySize(files.tokenizerJson));
    expect(lent.vocabSize()).toBe(151_669);
    const own = buildByteLevelTable(vocabularyFromLibrary(new HfTokenizer(files.tokenizerJson, files.tokenizerConfig), files.tokenizerConfig));
    const table = lent.byteLevelTable()!;
    for (const name of ["kinds", "skipped", "offsets", "bytes"] as const) {
      expect(bytesOf(table[name]).equals(bytesOf(own[name]))).toBe(true);
    }
    expect([...table.verbatim]).toEqual([...own.verbatim]);
  });

  it("are computed once and read by every tokenizer over those files, which decode as the library does", async () => {
    const files = (await store.files(defaultTokenizerDirectory()))!;
    const lent = store.derived!(files.tokenizerJson, files.tokenizerConfig)!;
    const first = new CheckpointTokenizer(files.tokenizerJson, files.tokenizerConfig, "lent", (await loadTokenizer()).chatTemplate);
    const second = new CheckpointTokenizer(files.tokenizerJson, files.tokenizerConfig, "lent", first.chatTemplate);
    expect(lent.byteLevelTable()).toBe(lent.byteLevelTable());
    expect(tableOf(first).kinds).toBe(lent.byteLevelTable()!.kinds);
    expect(tableOf(second).bytes).toBe(lent.byteLevelTable()!.bytes);
    expect(first.vocabSize).toBe(lent.vocabSize());
    const fresh = new HfTokenizer(files.tokenizerJson, files.tokenizerConfig);
    const ids = fresh.encode(`${TEXT}晴，25°C 😀`, { add_special_tokens: false }).ids;
    expect(second.decode(ids)).toBe(fresh.decode(ids, { skip_special_tokens: false }));
    expect(second.decode(ids, { skipSpecialTokens: true })).toBe(fresh.decode(ids, { skip_special_tokens: true }));
  });

  it("are lent only for the pair of files the store parsed together: another config object computes its own", async () => {
    const files = (await store.files(defaultTokenizerDirectory()))!;
    const otherConfig = { ...files.tokenizerConfig, additional_special_tokens: ["<think>"] };
    expect(store.derived!(files.tokenizerJson, otherConfig)).toBeUndefined();
    expect(store.derived!({ ...files.tokenizerJson }, files.tokenizerConfig)).toBeUndefined();
    const tokenizer = new CheckpointTokenizer(files.tokenizerJson, otherConfig, "own config", (await loadTokenizer()).chatTemplate);
    const table = tableOf(tokenizer);
    expect(table.kinds).not.toBe(store.derived!(files.tokenizerJson, files.tokenizerConfig)!.byteLevelTable()!.kinds);
    const think = tokenizer.tokenToId("<think>")!;
    expect(tokenizer.decode([think, 9707], { skipSpecialTokens: true })).toBe(
      new HfTokenizer(files.tokenizerJson, otherConfig).decode([think, 9707], { skip_special_tokens: true }),
    );
  });
});

describe("a checkpoint directory", () => {
  it("is read again once its files change on disk", async () => {
    const dir = copiedCheckpoint("rewritten");
    const before = (await store.files(dir))!;
    const configFile = path.join(dir, "tokenizer_config.json");
    const config = JSON.parse(fs.readFileSync(configFile, "utf8")) as Record<string, unknown>;
    fs.writeFileSync(configFile, JSON.stringify({ ...config, model_max_length: 1234 }));
    const after = (await store.files(dir))!;
    expect(after.tokenizerJson).not.toBe(before.tokenizerJson);
    expect(after.tokenizerConfig.model_max_length).toBe(1234);
  });

  it("that does not parse is not lent: the ordinary load reports it, with this realm's error class", async () => {
    const dir = copiedCheckpoint("corrupt");
    const file = path.join(dir, "tokenizer.json");
    fs.writeFileSync(file, '{"model": {"type": "BPE"');
    await expect(store.files(dir)).resolves.toBeNull();
    const failure = loadTokenizer({ hfCheckpoint: dir });
    await expect(failure).rejects.toBeInstanceOf(TokenizerLoadError);
    await expect(failure).rejects.toThrow(`cannot parse ${file} as JSON`);
  });

  it("that does not exist is not lent, and the load names the directory", async () => {
    const dir = path.join(scratch, "absent");
    await expect(store.files(dir)).resolves.toBeNull();
    await expect(loadTokenizer({ hfCheckpoint: dir })).rejects.toThrow(`cannot read tokenizer checkpoint ${dir}: directory not found`);
  });
});
