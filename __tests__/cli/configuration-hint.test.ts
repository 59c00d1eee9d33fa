// A run against a server that does not report its configuration (a foreign one: here ours behind a proxy whose
// /health says only "ok") names the likely cause when the first token difference is a think block, and the flags.
import { createServer, request, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { startMockBackend, weatherScript, type MockBackend } from "../../src/backend";
import { startSessionServer, type RunningSessionServer } from "../../src/server";
import { runParity } from "../../src/cli/run-parity";
import { renderReport } from "../../src/cli/summary-table";
import { RUN_DEFAULTS, type RunCommandOptions } from "../../src/cli/run-options";

let backend: MockBackend;
let thinking: RunningSessionServer;
let proxy: Server;
let proxyUrl: string;

beforeAll(async () => {
  backend = await startMockBackend({ process: weatherScript });
  // miles' own default kwargs: thinking on, so no empty think block in its prompts
  thinking = await startSessionServer({ version: "v2", backendUrl: backend.url, chatTemplateKwargs: {}, logger: { warn: () => undefined } });
  const target = new URL(thinking.url);
  proxy = createServer((req, res) => {
    if (req.url === "/health") {
      res.writeHead(200, { "content-type": "application/json" });
      res.end('{"status":"ok"}');
      return;
    }
    const upstream = request(
      { host: target.hostname, port: target.port, path: req.url, method: req.method, headers: { ...req.headers, host: target.host } },
      (reply) => {
        res.writeHead(reply.statusCode ?? 502, reply.headers);
        reply.pipe(res);
      },
    );
    req.pipe(upstream);
  });
  await new Promise<void>((resolve) => proxy.listen(0, "127.0.0.1", resolve));
  proxyUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
});

afterAll(async () => {
  proxy.closeAllConnections();
  await new Promise((resolve) => proxy.close(resolve));
  await thinking.close();
  await backend.close();
});

const options = (extra: Partial<RunCommandOptions>): RunCommandOptions => ({ ...RUN_DEFAULTS, batch: 1, latencyMs: 0, ...extra });

test("a silent v2 in thinking mode (its reasoning where v1 has an empty think block): the likely cause and the flags come first", async () => {
  const report = await runParity(options({ backend: backend.url, v2: proxyUrl }), { env: {} });
  expect(report.summary.pass).toBe(false);
  expect(report.configuration.v2).toBeNull();
  expect(report.configuration.v1).toEqual({
    family: "qwen3",
    template: "family",
    templateOrigin: "qwen3-append-safe.jinja",
    kwargs: { enable_thinking: false, clear_thinking: false },
  });
  expect(report.configuration.problem).toBeNull();
  expect(report.configuration.hint).toMatch(
    /^Likely cause: at \d+ of sample\.tokens, v1 has "\\n<think>\\n\\n<\/think>\\n\\n" where v2 has "\\n<think>\\nThe user wants the weather; I follow the script\.\\n<\/think>\\n\\n", a think-block difference: .* the v2 server does not report its configuration\. .*--chat-template-kwargs '\{"enable_thinking": false\}'.*--chat-template-kwargs '\{\}'/,
  );
  const text = renderReport(report);
  expect(text).toContain("family, template and kwargs not reported (not a jest-session-parity server)");
  expect(text.indexOf("Likely cause:")).toBeLessThan(text.indexOf("First failing differences"));
  // the failure reads as runs: the empty block against the mock's reasoning, once per generated turn, decoded
  expect(text).toMatch(
    /sample\.tokens: 1 token of v1 vs 12 of v2 at \d+ \("\\n\\n" vs "\\nThe user wants the weather; I follow the script\.\\n"\), then equal for \d+/,
  );
  expect(report.summary.configurationProblem).toBe(false);
});

test("both sides ours: no hint (they report their configuration, so a difference is a configuration problem instead)", async () => {
  const report = await runParity(options({ backend: backend.url, v2: thinking.url }), { env: {} });
  expect(report.configuration.hint).toBeNull();
  expect(report.configuration.problem).toContain('chat-template kwargs {"enable_thinking": false, "clear_thinking": false} vs {"clear_thinking": false}');
  expect(report.summary.configurationProblem).toBe(true);
});
