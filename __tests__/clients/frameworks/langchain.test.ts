// LangChain JS (ChatOpenAI.bindTools) and LangGraph (createReactAgent) against both reference servers under each
// built-in matcher, invoked and streamed. Both replay the tool call with its arguments re-serialized.
import { AIMessageChunk, HumanMessage, ToolMessage, type BaseMessage } from "@langchain/core/messages";
import { tool } from "@langchain/core/tools";
import { createReactAgent } from "@langchain/langgraph/prebuilt";
import { ChatOpenAI } from "@langchain/openai";
import { MOCK_TOOL_RESULTS, WEATHER_TOOLS } from "../../../src/agent/texts";
import { expectBrokenWarning, QUESTION, type SessionOutcome } from "../harness";
import { describeFrameworkStyles, type FrameworkDrive, type FrameworkStyle } from "./framework-kit";

// LangSmith tracing follows these variables; a run sent there would leave loopback (the guard refuses it).
for (const name of ["LANGSMITH_TRACING", "LANGSMITH_TRACING_V2", "LANGCHAIN_TRACING", "LANGCHAIN_TRACING_V2"]) delete process.env[name];

const WEATHER = WEATHER_TOOLS[0].function as { name: string; description: string; parameters: Record<string, unknown> };

function weatherTool(toolInputs: unknown[]) {
  return tool(
    async (input: unknown) => {
      toolInputs.push(input);
      return MOCK_TOOL_RESULTS[0];
    },
    { name: WEATHER.name, description: WEATHER.description, schema: WEATHER.parameters },
  );
}

// `streaming: true` is left off on purpose: with it, `invoke()` estimates token usage with tiktoken ranks that
// LangChain downloads at run time. The streamed styles below use `.stream()`, which never does.
const chatModel = (baseURL: string): ChatOpenAI => new ChatOpenAI({ model: "mock", apiKey: "unused", configuration: { baseURL }, maxRetries: 0 });

/** bindTools, the tool run by hand, and the reply replayed as LangChain keeps it. */
const viaBindTools =
  (stream: boolean) =>
  async (baseURL: string): Promise<FrameworkDrive> => {
    const toolInputs: unknown[] = [];
    const weather = weatherTool(toolInputs);
    const model = chatModel(baseURL).bindTools([weather]);
    const ask = async (messages: BaseMessage[]): Promise<AIMessageChunk> => {
      if (!stream) return await model.invoke(messages);
      let whole: AIMessageChunk | undefined;
      for await (const chunk of await model.stream(messages)) whole = whole === undefined ? chunk : whole.concat(chunk);
      return whole!;
    };
    const messages: BaseMessage[] = [new HumanMessage(QUESTION)];
    const first = await ask(messages);
    messages.push(first);
    for (const call of first.tool_calls ?? []) {
      messages.push(new ToolMessage({ tool_call_id: call.id!, content: String(await weather.invoke(call.args)) }));
    }
    const second = await ask(messages);
    return { finalText: String(second.content), toolInputs };
  };

/** createReactAgent runs the tool loop itself; streamed in "messages" mode, the model streams its replies. */
const viaReactAgent =
  (stream: boolean) =>
  async (baseURL: string): Promise<FrameworkDrive> => {
    const toolInputs: unknown[] = [];
    const agent = createReactAgent({ llm: chatModel(baseURL), tools: [weatherTool(toolInputs)] });
    const input = { messages: [new HumanMessage(QUESTION)] };
    if (!stream) {
      const state = await agent.invoke(input);
      return { finalText: String(state.messages[state.messages.length - 1].content), toolInputs };
    }
    // each model token chunk arrives as [chunk, metadata]; the last model reply's text is the answer
    const texts = new Map<string, string>();
    for await (const [chunk, metadata] of await agent.stream(input, { streamMode: "messages" })) {
      if ((metadata as { langgraph_node?: string }).langgraph_node !== "agent") continue;
      texts.set(chunk.id ?? "", (texts.get(chunk.id ?? "") ?? "") + String(chunk.content));
    }
    return { finalText: [...texts.values()].pop() ?? "", toolInputs };
  };

// LangChain keeps the parsed arguments and re-serializes them (`{"location":"Beijing"}` for the model's
// `{"location": "Beijing"}`): strict compares the text and breaks; loose_tool_call compares JSON objects.
const RESPELLED =
  /the replayed assistant message at index 1 differs from the stored one only in its tool-call spelling \(tool-call arguments re-serialized .*--message-matcher loose_tool_call/;
const BREAKS = { strict: (version: "v1" | "v2", outcome: SessionOutcome): void => expectBrokenWarning(version, outcome, RESPELLED) };

/** The replayed history: the turn as one message whose arguments are LangChain's spelling. */
function respelledTurn(_matcher: string, outcome: SessionOutcome): void {
  const replayed = outcome.records[1].request.messages as Array<Record<string, any>>;
  expect(replayed.map((m) => m.role)).toEqual(["user", "assistant", "tool"]);
  expect(replayed[1].content).toBe("Let me look up Beijing.");
  expect(replayed[1].tool_calls[0].function.arguments).toBe('{"location":"Beijing"}');
}

const STYLES: FrameworkStyle[] = [
  { streams: false, name: "ChatOpenAI.bindTools().invoke()", drive: viaBindTools(false), breaks: BREAKS, continuous: respelledTurn },
  { streams: true, name: "ChatOpenAI.bindTools().stream()", drive: viaBindTools(true), breaks: BREAKS, continuous: respelledTurn },
  { streams: false, name: "LangGraph createReactAgent().invoke()", drive: viaReactAgent(false), breaks: BREAKS, continuous: respelledTurn },
  {
    streams: true,
    name: 'LangGraph createReactAgent().stream({ streamMode: "messages" })',
    drive: viaReactAgent(true),
    breaks: BREAKS,
    continuous: respelledTurn,
  },
];

describeFrameworkStyles("@langchain", STYLES);
