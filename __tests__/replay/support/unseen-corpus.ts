// A seeded corpus of conversations the package has never seen (the shipped examples are hand-written): many tools,
// parallel calls, reasoning, unicode, empty contents, JSON and plain tool results, long histories, system messages.
// The same seed writes the same lines, in both formats (OpenAI chat records and miles trajectory dump rows).
import { writeFileSync } from "node:fs";
import * as path from "node:path";
import { gzipSync } from "node:zlib";

/** mulberry32, so the corpus depends on nothing but the seed. */
function generator(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

type Json = Record<string, unknown>;

const TOOL_NAMES = [
  "search_docs",
  "read_file",
  "run_shell",
  "get_weather",
  "convert_currency",
  "lookup_order",
  "translate",
  "create_ticket",
  "list_directory",
  "fetch_url",
  "calendar_free_slots",
  "send_email",
] as const;

const WORDS = [
  "alpha",
  "Zürich",
  "naïve",
  "東京",
  "Ωmega",
  "emoji 🚀",
  "Ünïcödé",
  "São Paulo",
  "naïveté",
  "größe",
  "مرحبا",
  "Привет",
  "tab\there",
  'quote "q"',
  "back\\slash",
  "line\nbreak",
  "",
  "0",
  "null",
  "<b>tag</b>",
];

const USER_ASKS = [
  "Can you check this for me?",
  "What happened to order 4411?",
  "Find the config file and tell me the port.",
  "Wie ist das Wetter in Zürich?",
  "東京の天気は？",
  "Convert 120 EUR to JPY and USD.",
  "Summarize the README, please.",
  "",
  "Book me a slot tomorrow — after 14:00 if possible.",
  "Why does the build fail? 🤔",
];

const REASONINGS = [
  "The user wants a lookup; I should call the tool first.",
  "Two independent facts are needed, so I can call both tools at once.",
  "Careful: the result was empty. I will say so plainly.",
  "多分ツールを使うべきです。",
  "Check units: 1 EUR ≈ 160 JPY today.",
];

function pickFrom<T>(random: () => number, items: readonly T[]): T {
  return items[Math.floor(random() * items.length)];
}

function toolSpec(name: string, random: () => number): Json {
  const properties: Json = { query: { type: "string", description: `What to ${name.replace(/_/g, " ")}` } };
  if (random() < 0.5) properties.limit = { type: "integer", minimum: 1 };
  if (random() < 0.3) properties.options = { type: "object", properties: { verbose: { type: "boolean" } } };
  return {
    type: "function",
    function: { name, description: `${name} (${pickFrom(random, WORDS)})`, parameters: { type: "object", properties, required: ["query"] } },
  };
}

/** Arguments JSON as a recorded agent log holds it (Python's json.dumps spelling; big ints and floats included). */
function argumentsText(random: () => number): string {
  const parts = [`"query": ${JSON.stringify(pickFrom(random, WORDS))}`];
  const roll = random();
  if (roll < 0.25) parts.push(`"limit": ${1 + Math.floor(random() * 50)}`);
  else if (roll < 0.35) parts.push(`"id": 12345678901234567890123`);
  else if (roll < 0.45) parts.push(`"ratio": 2.0, "threshold": 0.1`);
  else if (roll < 0.55) parts.push(`"options": {"verbose": true, "tags": ["a", "ß", null]}`);
  return `{${parts.join(", ")}}`;
}

function toolResult(random: () => number, index: number): string {
  const roll = random();
  if (roll < 0.35) return JSON.stringify({ ok: true, index, value: pickFrom(random, WORDS), items: [1, 2.5, "x"] });
  if (roll < 0.45) return "";
  if (roll < 0.55) return `Error: ${pickFrom(random, WORDS)} not found`;
  return `Result ${index}: ${pickFrom(random, WORDS)} — ${pickFrom(random, WORDS)}`;
}

/** One conversation: an optional system prompt, then turns of user asks, tool rounds (parallel sometimes), answers. */
function conversation(random: () => number, index: number, long: boolean): { messages: Json[]; tools: Json[] } {
  const toolCount = 1 + Math.floor(random() * 6);
  const names = [...TOOL_NAMES].sort(() => random() - 0.5).slice(0, toolCount);
  const tools = names.map((name) => toolSpec(name, random));
  const messages: Json[] = [];
  if (random() < 0.6) messages.push({ role: "system", content: `You are agent #${index}. ${pickFrom(random, WORDS)}` });
  const turns = long ? 12 + Math.floor(random() * 8) : 1 + Math.floor(random() * 3);
  let callId = 0;
  for (let turn = 0; turn < turns; turn += 1) {
    if (turn > 0 && random() < 0.15) messages.push({ role: "system", content: `Reminder: ${pickFrom(random, WORDS)}` });
    const ask = pickFrom(random, USER_ASKS);
    messages.push({
      role: "user",
      content:
        random() < 0.1
          ? [
              { type: "text", text: ask },
              { type: "text", text: "(details below)" },
            ]
          : ask,
    });
    const rounds = Math.floor(random() * (long ? 2 : 3));
    for (let round = 0; round < rounds; round += 1) {
      const parallel = random() < 0.35 ? 2 + Math.floor(random() * 3) : 1;
      const calls = Array.from({ length: parallel }, () => {
        callId += 1;
        return { id: `call_${index}_${callId}`, type: "function", function: { name: pickFrom(random, names), arguments: argumentsText(random) } };
      });
      const assistant: Json = { role: "assistant", content: random() < 0.6 ? "" : `Let me check (${pickFrom(random, WORDS)}).`, tool_calls: calls };
      if (random() < 0.3) assistant.reasoning_content = pickFrom(random, REASONINGS);
      messages.push(assistant);
      for (const call of calls) messages.push({ role: "tool", tool_call_id: call.id, content: toolResult(random, callId) });
    }
    const answer: Json = { role: "assistant", content: random() < 0.08 ? "" : `Answer ${turn}: ${pickFrom(random, WORDS)} ${pickFrom(random, WORDS)}.` };
    if (random() < 0.3) answer.reasoning_content = pickFrom(random, REASONINGS);
    messages.push(answer);
  }
  return { messages, tools };
}

/** Writes the corpus as two files under `dir`: the OpenAI records gzip-compressed, the miles rows plain. */
export function writeUnseenCorpus(dir: string, seed: number, count = 40): string[] {
  const { openai, miles } = unseenCorpus(seed, count);
  const files = [path.join(dir, `unseen-${seed}.jsonl.gz`), path.join(dir, `unseen-${seed}-dump.jsonl`)];
  writeFileSync(files[0], gzipSync(`${openai.join("\n")}\n`));
  writeFileSync(files[1], `${miles.join("\n")}\n`);
  return files;
}

/** The corpus of `count` conversations (about a fifth of them long), split between the two formats. */
export function unseenCorpus(seed: number, count = 40): { openai: string[]; miles: string[] } {
  const random = generator(seed);
  const openai: string[] = [];
  const miles: string[] = [];
  for (let index = 0; index < count; index += 1) {
    const { messages, tools } = conversation(random, index, index % 5 === 3);
    if (index % 2 === 0) {
      openai.push(JSON.stringify({ id: `unseen-${seed}-${index}`, tools, messages }));
    } else {
      const prompt = messages.slice(
        0,
        messages.findIndex((message) => message.role === "assistant"),
      );
      miles.push(
        // some rows carry no tools (the replay derives specs from the called names)
        JSON.stringify({
          sample_index: index,
          group_index: Math.floor(index / 4),
          status: "completed",
          reward: random() < 0.5 ? 1 : 0,
          prompt,
          messages,
          ...(index % 4 === 1 ? {} : { tools }),
        }),
      );
    }
  }
  return { openai, miles };
}
