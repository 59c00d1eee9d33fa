// Under a Jest config that leaves msw's ESM-only dependencies untransformed, the fixture's lazy loader says which
// preset or transform line fixes it, instead of Jest's raw "Must use import to load ES Module". Runs a child Jest.
import { spawn } from "node:child_process";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import * as os from "node:os";
import * as path from "node:path";

jest.setTimeout(120_000);

const ROOT = path.resolve(__dirname, "../..");

test("a child Jest without the preset's transform gets the explained error", async () => {
  const scratch = await mkdtemp(path.join(os.tmpdir(), "session-parity-esm-"));
  try {
    const output = path.join(scratch, "result.json");
    const env: NodeJS.ProcessEnv = { ...process.env };
    for (const name of Object.keys(env)) if (name.startsWith("SESSION_PARITY_")) delete env[name];
    const args = [
      require.resolve("jest/bin/jest"),
      "--config",
      path.join(__dirname, "untransformed-msw", "jest.config.js"),
      "--runInBand",
      "--json",
      `--outputFile=${output}`,
    ];
    let stderr = "";
    const code = await new Promise<number | null>((resolve, reject) => {
      const child = spawn(process.execPath, args, { cwd: ROOT, env, stdio: ["ignore", "ignore", "pipe"] });
      child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
      child.on("error", reject);
      child.on("close", resolve);
    });
    const result = JSON.parse(await readFile(output, "utf8")) as { numPassedTests: number; numTotalTests: number };
    expect({ code, passed: result.numPassedTests, total: result.numTotalTests, stderr: code === 0 ? "" : stderr }).toEqual({
      code: 0,
      passed: 1,
      total: 1,
      stderr: "",
    });
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
});
