// The worker's tokenizer store that jest.environment.ts lends every test file: one parse and one library build per
// checkpoint, re-read when the files change on disk, and never the source of an error a user sees.
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { Tokenizer as HfTokenizer } from "@huggingface/tokenizers";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { defaultTokenizerDirectory, loadTokenizer, TokenizerLoadError, type Qwen3Tokenizer } from "../../src/tokenizer";
import { sharedTokenizerFiles, type SharedTokenizerFiles } from "../../src/tokenizer/shared-files";

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
