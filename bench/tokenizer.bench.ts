// Benchmark of Qwen3 TITO prompt construction: its cost must not grow with the stored history.
// Prints ratios measured side by side in one run (npm run bench tokenizer); not part of npm test.
import { buildInitialMessages, MOCK_TOOL_RESULTS, WEATHER_TOOLS } from "../src/agent/texts";
import { createTito, loadTokenizer, type ChatMessage, type Qwen3Tito, type Qwen3Tokenizer } from "../src/tokenizer";

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
  let text = "";
  const render = () => tokenizer.renderChatTemplate(messages, { tools: WEATHER_TOOLS, kwargs });
  for (;;) {
    const city = CITIES[turn % CITIES.length]!;
    messages.push({
      role: "assistant",
      content: "",
      tool_calls: [{ id: `call${turn}`, type: "function", function: { name: "get_weather", arguments: JSON.stringify({ location: city }) } }],
    });
    messages.push({ role: "tool", content: MOCK_TOOL_RESULTS[turn % MOCK_TOOL_RESULTS.length]!, tool_call_id: `call${turn}` });
    messages.push({
      role: "assistant",
      content: `Turn ${turn}: the weather in ${city} is ${MOCK_TOOL_RESULTS[turn % 4]}. Ask me about another city (#${turn * 7919 % 1000}).`,
    });
    turn += 1;
    if (turn % 20 === 0 || targetTokens < 5000) {
      text = render();
      if (tokenizer.encode(text).length >= targetTokens) break;
    }
  }
  const ids = tokenizer.encode(text);
  const storedIds = ids.slice(0, ids[ids.length - 1] === 198 ? -1 : undefined);
  const next = [...messages, { role: "tool", content: MOCK_TOOL_RESULTS[1]!, tool_call_id: `call${turn - 1}` }];
  return { messages, storedIds, next };
}

function nowMs(): number {
  return Number(process.hrtime.bigint()) / 1e6;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

/** Median time of each task, running the tasks interleaved so machine noise hits all of them alike. */
function measure(tasks: Record<string, () => unknown>, rounds: number): Record<string, number> {
  const samples: Record<string, number[]> = {};
  for (const name of Object.keys(tasks)) {
    samples[name] = [];
    tasks[name]!(); // warm-up
  }
  for (let round = 0; round < rounds; round += 1) {
    for (const [name, task] of Object.entries(tasks)) {
      const start = nowMs();
      task();
      samples[name]!.push(nowMs() - start);
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

  const growth = merge.mergeLarge! / merge.mergeSmall!;
  const speedUp = full.scratchLarge! / full.mergeLarge!;
  const throughput = encodeTokens / (encode.encode! / 1000);
  console.log(
    `prompt construction, one appended tool message: ${merge.mergeLarge!.toFixed(3)} ms at ${large.storedIds.length} ` +
      `stored tokens / ${merge.mergeSmall!.toFixed(3)} ms at ${small.storedIds.length} = ${growth.toFixed(2)} ` +
      `(goal <= 1.5: ${growth <= 1.5 ? "met" : "NOT met"})`,
  );
  console.log(
    `  of which the appended-suffix tokenization: ${suffix.suffixLarge!.toFixed(3)} ms / ${suffix.suffixSmall!.toFixed(3)} ms = ` +
      `${(suffix.suffixLarge! / suffix.suffixSmall!).toFixed(2)}; copying the stored ids into the returned array: ` +
      `${suffix.copyLarge!.toFixed(3)} ms at ${large.storedIds.length} tokens`,
  );
  console.log(
    `full render+encode of the ${large.storedIds.length}-token history / TITO merge: ${full.scratchLarge!.toFixed(1)} ms / ` +
      `${full.mergeLarge!.toFixed(3)} ms = ${speedUp.toFixed(0)}x speed-up`,
  );
  console.log(`encode throughput: ${encodeTokens} tokens in ${encode.encode!.toFixed(1)} ms = ${Math.round(throughput)} tokens/s`);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
