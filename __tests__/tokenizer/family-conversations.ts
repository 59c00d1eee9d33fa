// Test helper: seeded random conversations for the Kimi / MiniMax / Inkling cross-checks (tools, parallel calls,
// reasoning, every append role a family allows), and the turn-by-turn play of a session server over them.
import type { LoadedModel } from "../../src/tokenizer";
import type { ChatMessage, ChatTemplateKwargs, ToolSpec } from "../../src/tokenizer";

/** mulberry32: a small deterministic generator, so a failing case is the same case on every run. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

type Random = () => number;

const pick = <T>(random: Random, items: readonly T[]): T => items[Math.floor(random() * items.length)];
const chance = (random: Random, p: number): boolean => random() < p;

/** Texts with what templates and tokenizers trip on: quotes, backslashes, newlines, CJK, emoji, spaces at the ends. */
const WORDS = [
  "weather",
  "Beijing",
  "北京",
  "naïve",
  "emoji 🌧️",
  'say "hi"',
  "back\\slash",
  "tab\there",
  "a\nb",
  "  padded  ",
  "x",
  "<b>tag</b>",
  "50%",
  "{brace}",
];

function sentence(random: Random): string {
  const count = 1 + Math.floor(random() * 5);
  return Array.from({ length: count }, () => pick(random, WORDS)).join(" ");
}

/** Tool-call argument JSON text written by hand, so integral floats (1.0), exponents and nesting reach the renderer. */
function argumentValue(random: Random, depth: number): string {
  const kinds = depth > 1 ? ["string", "int", "float", "bool", "null"] : ["string", "int", "float", "bool", "null", "list", "object"];
  switch (pick(random, kinds)) {
    case "string":
      return JSON.stringify(sentence(random));
    case "int":
      return String(Math.floor(random() * 2000) - 1000);
    case "float":
      return pick(random, ["1.0", "2.5", "-0.5", "1e-07", "3.14159", "100.0", "2.5e-05"]);
    case "bool":
      return random() < 0.5 ? "true" : "false";
    case "null":
      return "null";
    case "list":
      return `[${Array.from({ length: Math.floor(random() * 3) }, () => argumentValue(random, depth + 1)).join(", ")}]`;
    default:
      return argumentObject(random, depth + 1);
  }
}

function argumentObject(random: Random, depth: number): string {
  const keys = ["location", "unit", "days", "城市", "opts", "q", "n"];
  const count = Math.floor(random() * 3) + (depth === 0 ? 1 : 0);
  const chosen = [...new Set(Array.from({ length: count }, () => pick(random, keys)))];
  return `{${chosen.map((key) => `${JSON.stringify(key)}: ${argumentValue(random, depth)}`).join(", ")}}`;
}

/** Tools of the conversations (a fixed pair plus a random extra one, as an agent's tool list varies). */
export const CONVERSATION_TOOLS: ToolSpec[] = [
  {
    type: "function",
    function: {
      name: "get_weather",
      description: "Get the weather for a location",
      parameters: { type: "object", properties: { location: { type: "string" }, unit: { type: "string", enum: ["c", "f"] } }, required: ["location"] },
    },
  },
  { type: "function", function: { name: "search", description: "Search the web 🔎", parameters: { type: "object", properties: { q: { type: "string" } } } } },
];

/** What a family's conversations may hold. */
export interface ConversationShape {
  /** Roles the family may append after a stored assistant turn. */
  appendRoles: readonly string[];
  /** The family renders `reasoning_content` (all of ours do). */
  reasoning: boolean;
  /** Tool-call ids the way the family's model writes them (Kimi: `functions.NAME:INDEX`), else `call_N`. */
  toolCallId?: (name: string, index: number) => string;
  /** The generation prompt opens the reasoning block, so every generated turn carries a reasoning (MiniMax). */
  alwaysReasons?: boolean;
  /** User content may be a list of text parts. */
  contentParts: boolean;
}

/** A conversation and which of its assistant messages the model generates (the others are prefilled). */
export interface Conversation {
  messages: ChatMessage[];
  tools: ToolSpec[] | null;
  /** Indices of the generated assistant turns. */
  generated: number[];
}

/** A random conversation: optional system, a user turn, then assistant turns each followed by appended messages. */
export function randomConversation(random: Random, shape: ConversationShape): Conversation {
  const messages: ChatMessage[] = [];
  if (chance(random, 0.5)) messages.push({ role: "system", content: sentence(random) });
  messages.push(userMessage(random, shape));
  const tools = chance(random, 0.8) ? CONVERSATION_TOOLS : null;
  const turns = 1 + Math.floor(random() * 4);
  let callCount = 0;
  const generated: number[] = [];
  for (let turn = 0; turn < turns; turn += 1) {
    const calls = tools !== null && chance(random, 0.6) ? 1 + Math.floor(random() * 3) : 0;
    const assistant: ChatMessage = { role: "assistant", content: chance(random, calls > 0 ? 0.5 : 1) ? sentence(random) : "" };
    if (shape.reasoning && (shape.alwaysReasons === true || chance(random, 0.7))) assistant.reasoning_content = sentence(random);
    if (calls === 0 && assistant.content === "" && assistant.reasoning_content === undefined) assistant.content = sentence(random);
    const toolCalls = Array.from({ length: calls }, (_, i) => {
      const name = pick(random, ["get_weather", "search"]);
      const id = shape.toolCallId?.(name, callCount + i) ?? `call_${callCount + i}`;
      return { id, type: "function" as const, function: { name, arguments: argumentObject(random, 0) } };
    });
    callCount += calls;
    if (calls > 0) assistant.tool_calls = toolCalls;
    generated.push(messages.length);
    messages.push(assistant);
    if (turn === turns - 1) break;
    // the appended messages: the tool results (parallel calls answered in order), then maybe more roles
    for (const call of toolCalls) messages.push({ role: "tool", tool_call_id: call.id, content: chance(random, 0.2) ? "" : sentence(random) });
    const extra = shape.appendRoles.filter((role) => role !== "tool");
    if (calls === 0 || chance(random, 0.3)) {
      const role = pick(random, extra);
      if (role === "assistant") {
        // an assistant message among the appended ones (a prefilled turn), then the user it answers
        messages.push(userMessage(random, shape), { role: "assistant", content: sentence(random) }, userMessage(random, shape));
      } else if (role === "system") messages.push({ role: "system", content: sentence(random) });
      else messages.push(userMessage(random, shape));
    }
  }
  return { messages, tools, generated };
}

function userMessage(random: Random, shape: ConversationShape): ChatMessage {
  if (shape.contentParts && chance(random, 0.2))
    return {
      role: "user",
      content: [
        { type: "text", text: sentence(random) },
        { type: "text", text: sentence(random) },
      ],
    };
  return { role: "user", content: sentence(random) };
}

/** How a family's model ends a turn: the text the template writes after it, and the stop token the engine adds. */
export interface TurnEnding {
  /** Text the template writes at the end of an assistant turn that the model does not generate (`[e~[\n` → `[e~[`). */
  renderedEnd: string;
  /** The stop token the model ends its turn with. */
  stopToken: string;
}

/** Everything one played conversation produced: each generated turn's prompt (text and merged ids). */
export interface PlayedTurn {
  /** Messages before the generated turn. */
  history: ChatMessage[];
  /** Our render of the prompt (with the generation prompt). */
  promptText: string;
  /** The prompt ids: rendered from scratch for the first turn, merged by TITO for every later one. */
  promptIds: number[];
}

/**
 * Plays a conversation as a session server: the first prompt rendered, every later prompt merged from the stored ids
 * (previous prompt + the model's completion + its stop token) and the appended messages. The model's completion is
 * what the template renders for the turn after its generation prompt, less the template's end it does not write.
 */
export function playConversation(model: LoadedModel, conversation: Conversation, ending: TurnEnding, kwargs?: ChatTemplateKwargs): PlayedTurn[] {
  const { messages, tools } = conversation;
  const { tito, tokenizer } = model;
  const merged = tito.mergeKwargs(kwargs);
  const stop = tokenizer.tokenToId(ending.stopToken);
  if (stop === undefined) throw new Error(`no stop token ${ending.stopToken}`);
  const played: PlayedTurn[] = [];
  let stored: number[] | null = null;
  let storedMessages: ChatMessage[] = [];
  for (const index of conversation.generated) {
    const history = messages.slice(0, index);
    const promptText = tokenizer.renderChatTemplate(history, { tools, addGenerationPrompt: true, kwargs: merged });
    const promptIds: number[] =
      stored === null ? tito.renderPromptIds(history, tools, kwargs) : tito.mergeTokens(storedMessages, history, stored, tools, kwargs);
    played.push({ history, promptText, promptIds });
    const after = tokenizer.renderChatTemplate(messages.slice(0, index + 1), { tools, kwargs: merged });
    if (!after.startsWith(promptText)) throw new Error(`turn ${index}: the render of the turn does not extend its generation prompt`);
    let output = after.slice(promptText.length);
    if (!output.endsWith(ending.renderedEnd))
      throw new Error(`turn ${index}: the turn ends ${JSON.stringify(output.slice(-30))}, not ${JSON.stringify(ending.renderedEnd)}`);
    output = output.slice(0, output.length - ending.renderedEnd.length);
    stored = [...promptIds, ...tokenizer.encode(output), stop];
    storedMessages = messages.slice(0, index + 1);
  }
  return played;
}
