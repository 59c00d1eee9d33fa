// Records the agent's cassette against `session-parity mock`, standing in for your SGLang server: the mock runs as
// its own process (as SGLang would), and runAgentParity appends to the cassette what it lacks (nothing, once committed).
import { spawn } from "node:child_process";
import { createRequire } from "node:module";
import * as path from "node:path";
import { runAgentParity } from "jest-session-parity";
import agent from "./agent.cjs";

const require = createRequire(import.meta.url);
const cli = path.join(path.dirname(require.resolve("jest-session-parity/package.json")), "dist/src/cli/main.js");
const sglang = spawn(process.execPath, [cli, "mock", "--port", "0", "--script", "weather"], { stdio: ["ignore", "pipe", "inherit"] });
try {
  const url = await new Promise((resolve, reject) => {
    let out = "";
    sglang.stdout.on("data", (chunk) => {
      out += chunk;
      const match = /listening on (http:\/\/\S+)/.exec(out);
      if (match) resolve(match[1]);
    });
    sglang.once("exit", (code) => reject(new Error(`session-parity mock exited with ${code}`)));
  });
  const { v1, v2 } = await runAgentParity({ agent: agent.weatherAgentRun, cassette: { file: agent.CASSETTE, upstream: url }, server: agent.SERVER_OPTIONS });
  console.log(`recorded ${agent.CASSETTE}: v1 ${v1.preCollect.records.length} records, v2 ${v2.preCollect.records.length} records`);
} finally {
  sglang.kill("SIGTERM");
}
