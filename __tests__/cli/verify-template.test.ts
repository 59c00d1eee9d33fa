// `session-parity verify-template` as a user runs it: exit 0 on Qwen3's append-safe template, 1 with the first
// divergence on the checkpoint's native template, 2 on a bad flag or an unknown family; --json holds the report.
import { describe, expect, test } from "@jest/globals";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { buildProgram, CliExit, executeVerifyTemplate, type VerifyTemplateCommandOptions } from "../../src/cli";
import { defaultTokenizerDirectory } from "../../src/tokenizer";
import { runCli } from "./run-cli";

jest.setTimeout(120_000);

describe("session-parity verify-template", () => {
  test("--tito-model qwen3 passes: one line per check, the coverage left out by --thinking, the summary, exit 0", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "verify-template-cli-"));
    try {
      const json = path.join(dir, "report.json");
      const result = await runCli(["verify-template", "--tito-model", "qwen3", "--json", json]);
      expect(result.stderr).toBe("");
      expect(result.code).toBe(0);
      expect(result.stdout).toMatch(/^Template source: {7}fixed template via TITO: qwen3-append-safe\.jinja$/m);
      expect(result.stdout).toMatch(/^Auto-set kwarg: {8}clear_thinking=false \(from --tito-model qwen3\)$/m);
      expect(result.stdout).toMatch(
        /^ {2}PASS {2}tito {2}single_tool|^ {2}PASS {2}tito {2}thinking_chat_user_turns-N3-clear_thinking_off-enable_thinking_on$/m,
      );
      expect(result.stdout).toContain("Not exercised by this run (thinking x append roles beyond tool):\n  - non-thinking x {}");
      expect(result.stdout).toMatch(/^Results: (\d+)\/\1 passed, 0 failed/m);
      expect(result.stdout).toContain("Verdict: PASS - TITO incremental tokenization matched the standard render");
      const report = JSON.parse(fs.readFileSync(json, "utf8")) as { summary: { pass: boolean; checks: number }; results: unknown[] };
      expect(report.summary.pass).toBe(true);
      expect(report.results).toHaveLength(report.summary.checks);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  test("--tito-model default on the packaged checkpoint (native Qwen3 template) fails, naming the first divergence, exit 1", async () => {
    const result = await runCli(["verify-template", "--tito-model", "default", "--hf-checkpoint", defaultTokenizerDirectory()]);
    expect(result.code).toBe(1);
    expect(result.stdout).toMatch(/^ {2}FAIL {2}tito {2}thinking_chat_user_turns-N3-enable_thinking_on +-- decode-roundtrip mismatch \(N=3\) at char \d+$/m);
    expect(result.stdout).toMatch(
      /^First divergence: thinking_chat_user_turns-N3-enable_thinking_on \(text layer\): prefix mismatch \(N=3\).* at char \d+: expected \.\.\.".*"\.\.\. actual \.\.\.".*<think>/m,
    );
    expect(result.stdout).toContain("Verdict: FAIL - TITO incremental tokenization did NOT match the standard render");
  });

  test("usage and load problems reject with a status-2 CliExit naming them (in-process)", async () => {
    const status = async (args: string[]): Promise<{ exitCode: number; message: string }> => {
      const program = buildProgram();
      for (const command of [program, ...program.commands]) command.configureOutput({ writeOut: () => undefined, writeErr: () => undefined });
      const error = await program.parseAsync(["node", "session-parity", ...args]).then(
        () => new Error(`session-parity ${args.join(" ")} did not fail`),
        (reason: unknown) => reason,
      );
      if (!(error instanceof CliExit)) throw error;
      return { exitCode: error.exitCode, message: error.message };
    };
    expect(await status(["verify-template", "--tito-model", "qwen9"])).toEqual({
      exitCode: 2,
      message: expect.stringMatching(/^unknown --tito-model "qwen9"; registered families: default, qwen3/) as unknown,
    });
    const badKwargs = await status(["verify-template", "--tito-model", "qwen3", "--chat-template-kwargs", "[1]"]);
    expect(badKwargs.exitCode).toBe(2);
    expect(badKwargs.message).toContain("option '--chat-template-kwargs <json>' argument '[1]' is invalid. must be a JSON object");
    expect(await status(["verify-template", "--thinking", "maybe"])).toMatchObject({
      exitCode: 2,
      message: expect.stringContaining("Allowed choices are off, on, both") as unknown,
    });
    expect(await status(["verify-template"])).toEqual({
      exitCode: 2,
      message: "give --tito-model, --hf-checkpoint or --chat-template-path: there is no template to verify otherwise",
    });
    const conflict = await status(["verify-template", "--tito-model", "qwen3", "--chat-template-kwargs", '{"clear_thinking": true}']);
    expect(conflict).toEqual({
      exitCode: 2,
      message: "--chat-template-kwargs: chat template kwarg clear_thinking=True conflicts with the value registered for Qwen3TITOTokenizer: False",
    });
  });
});

describe("executeVerifyTemplate (in-process)", () => {
  test("returns the report with exit status 0, and a --json file that cannot be written is a status-2 CliExit", async () => {
    const out: string[] = [];
    const options: VerifyTemplateCommandOptions = { titoModel: "qwen3", thinking: "off" };
    const { exitCode, report } = await executeVerifyTemplate(options, { out: { write: (chunk: string) => out.push(chunk) } });
    expect(exitCode).toBe(0);
    expect(report.summary).toMatchObject({ pass: true, failed: 0 });
    expect(out.join("")).toContain("Not exercised by this run (thinking x append roles beyond tool):\n  - thinking     x {}");
    const missing = path.join(os.tmpdir(), "no-such-dir-verify-template", "report.json");
    const error = await executeVerifyTemplate({ ...options, json: missing }, { out: { write: () => true } }).then(
      () => new Error("expected a CliExit"),
      (reason: unknown) => reason,
    );
    expect(error).toBeInstanceOf(CliExit);
    expect((error as CliExit).exitCode).toBe(2);
    expect((error as CliExit).message).toMatch(/^cannot write the --json report to .*report\.json: ENOENT/);
  });
});
