import { ChatOpenAI } from "@langchain/openai";
import { tool as lcTool } from "@langchain/core/tools";
import { z } from "zod";
import { startMockBackend, weatherScript } from "./src/backend";
import { startSessionServer } from "./src/server";
import { SessionClient } from "./src/fixture/session-client";
const weather = lcTool(async () => "x", { name: "get_weather", description: "Return the current weather for a city.", schema: z.object({ location: z.string() }) });
(async () => {
  const backend = await startMockBackend({ process: weatherScript });
  const server = await startSessionServer({ version: "v1", backendUrl: backend.url, messageMatcher: "loose_tool_call" });
  const c = new SessionClient(server.url); const id = await c.createSession();
  const baseURL = `${c.sessionUrl(id)}/v1`;
  const model = new ChatOpenAI({ model: "mock", apiKey: "unused", configuration: { baseURL }, maxRetries: 0, streaming: true }).bindTools([weather]);
  const t0 = Date.now(); const raw = await fetch(`${baseURL}/chat/completions`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ model: "mock", stream: true, messages: [{ role: "user", content: "hi" }], tools: [{ type: "function", function: { name: "get_weather", parameters: { type: "object" } } }] }) }); console.log(await raw.text());
  try { process.on("unhandledRejection", (e) => console.log("UNHANDLED", e)); const r = await model.invoke("hi"); console.log("INVOKED", JSON.stringify(r)); } catch (e) { console.log("ERR", e); }
  await server.close(); console.log("closed"); await backend.close();
})();
