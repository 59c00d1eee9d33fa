// The chat-template verifier on the real Qwen3 tokenizer: the append-safe template passes both layers, the native one
// fails with its first divergence, a planted merge bug fails the TITO layer alone; pool, selection and coverage rules.
import { describe, expect, test } from "@jest/globals";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { defaultTokenizerDirectory } from "../../src/tokenizer";
import {
  caseId,
  checkTitoLayer,
  classifyTrajectory,
  coverageOf,
  firstDivergence,
  loadTemplateVerifyPlan,
  selectTrajectories,
  TemplateVerifyLoadError,
  thinkingVariants,
  VERIFY_TRAJECTORIES,
  verifyChatTemplate,
  verifyTemplate,
  type TemplateVerifyFamily,
} from "../../src/verify";

const pool = VERIFY_TRAJECTORIES.map(classifyTrajectory);
const ALL_ROLES = new Set(["tool", "user", "system", "assistant"]);

describe("the trajectory pool", () => {
  test("holds at least 15 uniquely named trajectories whose positions fall inside their messages", () => {
    expect(pool.length).toBeGreaterThanOrEqual(15);
    expect(new Set(pool.map((t) => t.name)).size).toBe(pool.length);
    for (const trajectory of pool) {
      expect(trajectory.pretokenizePositions.length).toBeGreaterThan(0);
      for (const n of trajectory.pretokenizePositions) {
        expect(n).toBeGreaterThan(0);
        expect(n).toBeLessThan(trajectory.messages.length);
        // every position follows the first assistant turn: the prefix holds a generated turn to append to
        expect(trajectory.messages.slice(0, n).some((m) => m.role === "assistant")).toBe(true);
      }
    }
  });

  test("covers what agents do: parallel calls, long chains, reminders, several user turns, thinking, mixed roles", () => {
    const maxCalls = Math.max(...pool.flatMap((t) => t.messages.map((m) => m.tool_calls?.length ?? 0)));
    expect(maxCalls).toBeGreaterThanOrEqual(3);
    expect(pool.some((t) => t.messages.filter((m) => m.role === "tool").length >= 4)).toBe(true);
    expect(pool.some((t) => t.appendRoles.has("system") && !t.thinking)).toBe(true);
    expect(pool.some((t) => t.thinking && t.messages.filter((m) => m.role === "user").length >= 3)).toBe(true);
    expect(pool.some((t) => ["tool", "user", "system"].every((role) => t.appendRoles.has(role)))).toBe(true);
  });

  test("classification: append roles are the non-assistant roles after the first assistant turn", () => {
    const retry = pool.find((t) => t.name === "retry_after_reminder")!;
    expect([...retry.appendRoles].sort()).toEqual(["system", "tool"]);
    expect(retry.thinking).toBe(false);
    expect(pool.find((t) => t.name === "thinking_chat_user_turns")!.thinking).toBe(true);
  });

  test("the pool leaves no thinking x {user, system} cell empty; a tool-only family leaves the role cells unexercised", () => {
    // mirrors miles' check_coverage (utils/test_utils/chat_template_verify.py): tool is not on the role axis
    expect(coverageOf(pool, pool).poolGaps).toEqual([]);
    const toolOnly = selectTrajectories(pool, new Set(["tool"]), "both");
    const missing = coverageOf(pool, toolOnly).notExercised.map((cell) => `${cell.thinking}:${cell.roles.join("+")}`);
    expect(missing).toEqual(["false:system", "false:user", "false:system+user", "true:system", "true:user", "true:system+user"]);
  });
});

describe("selection, variants and case ids (miles' select_cases, enable_thinking_variants, format_case_id)", () => {
  test("off keeps non-thinking trajectories, on the thinking ones, both all; roles filter by subset", () => {
    const off = selectTrajectories(pool, ALL_ROLES, "off");
    const on = selectTrajectories(pool, ALL_ROLES, "on");
    expect(off.every((t) => !t.thinking)).toBe(true);
    expect(on.every((t) => t.thinking)).toBe(true);
    expect(off.length + on.length).toBe(pool.length);
    expect(selectTrajectories(pool, ALL_ROLES, "both")).toHaveLength(pool.length);
    const noSystem = selectTrajectories(pool, new Set(["tool", "user", "assistant"]), "both");
    expect(noSystem.some((t) => t.appendRoles.has("system"))).toBe(false);
    expect(noSystem.length).toBeLessThan(pool.length);
  });

  test("variants and ids", () => {
    expect(thinkingVariants("off")).toEqual([{}]);
    expect(thinkingVariants("on")).toEqual([{ enable_thinking: true }]);
    expect(thinkingVariants("both")).toEqual([{ enable_thinking: true }, { enable_thinking: false }]);
    expect(caseId("single_tool", 3, {})).toBe("single_tool-N3");
    expect(caseId("single_tool", 3, { enable_thinking: false, clear_thinking: false, depth: 2 })).toBe(
      "single_tool-N3-clear_thinking_off-depth=2-enable_thinking_off",
    );
  });

  test("firstDivergence quotes 60 characters each side and is null on equal texts", () => {
    const a = `${"x".repeat(100)}A${"y".repeat(100)}`;
    const b = `${"x".repeat(100)}B${"y".repeat(100)}`;
    expect(firstDivergence(a, b)).toEqual({ index: 100, expected: `${"x".repeat(60)}A${"y".repeat(59)}`, actual: `${"x".repeat(60)}B${"y".repeat(59)}` });
    expect(firstDivergence("abc", "abcd")?.index).toBe(3);
    expect(firstDivergence("same", "same")).toBeNull();
  });
});

describe("verification on the real Qwen3 tokenizer", () => {
  // mirrors tests/fast/utils/chat_template_utils/test_pretokenized_via_tito.py::test_via_tito_pass_on_registered_families (qwen3, thinking="both")
  test("qwen3 through its append-safe template passes every text and TITO check under both thinking variants", async () => {
    const report = await verifyTemplate({ titoModel: "qwen3", thinking: "both" });
    const failures = report.results.filter((r) => !r.passed).map((r) => `${r.layer} ${r.id}: ${r.error}`);
    expect(failures).toEqual([]);
    expect(report.summary.pass).toBe(true);
    expect(report.selectedTrajectories).toBe(pool.length);
    expect(report.results.filter((r) => r.layer === "tito").length).toBeGreaterThan(50);
    expect(report.autoSetKwargs).toEqual({ clear_thinking: false });
    expect(report.coverage.notExercised).toEqual([]);
  });

  // mirrors test_pretokenized_via_tito.py::test_via_tito_fail_on_original_qwen3_template
  test("default on the packaged checkpoint's native Qwen3 template fails at the reasoning of an earlier assistant turn", async () => {
    const report = await verifyTemplate({ titoModel: "default", hfCheckpoint: defaultTokenizerDirectory(), thinking: "on" });
    expect(report.summary.pass).toBe(false);
    const firstTito = report.results.find((r) => r.layer === "tito" && !r.passed)!;
    expect(firstTito.error).toMatch(/^decode-roundtrip mismatch \(N=\d+\)/);
    // the canonical render drops the stored turn's reasoning; the merged ids keep it
    expect(firstTito.divergence!.actual).toContain("<think>");
    expect(firstTito.divergence!.expected).not.toContain("<think>");
    expect(report.results.find((r) => r.layer === "text" && !r.passed)!.error).toMatch(/^prefix mismatch/);
  });

  test("the template-only check (no family) runs the text layer alone", async () => {
    const report = await verifyTemplate({ hfCheckpoint: defaultTokenizerDirectory(), thinking: "off" });
    expect(report.titoModel).toBeNull();
    expect(new Set(report.results.map((r) => r.layer))).toEqual(new Set(["text"]));
    expect(report.summary.pass).toBe(false);
  });

  test("a --chat-template-path override is checked through a named family (miles: template override via TITO)", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "verify-template-"));
    try {
      const native = (JSON.parse(fs.readFileSync(path.join(defaultTokenizerDirectory(), "tokenizer_config.json"), "utf8")) as { chat_template: string })
        .chat_template;
      const file = path.join(dir, "native.jinja");
      fs.writeFileSync(file, native);
      const report = await verifyTemplate({ titoModel: "qwen3", chatTemplatePath: file, thinking: "on" });
      expect(report.templateSource).toBe(`template override via TITO: ${file}`);
      expect(report.summary.pass).toBe(false);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  // mirrors test_pretokenized_via_tito.py's _BuggyQwen3TITOTokenizer (no "\n" inserted after <|im_end|>)
  test("a merge that forgets the newline after <|im_end|> fails the TITO layer while the text layer passes", async () => {
    const plan = await loadTemplateVerifyPlan({ titoModel: "qwen3", thinking: "off" });
    const buggy = (kwargs: Record<string, unknown>): TemplateVerifyFamily => {
      const real = plan.family!(kwargs);
      return {
        ...real,
        mergeTokens: (prefix, full, ids, tools) => {
          const merged = real.mergeTokens(prefix, full, ids, tools);
          return [...ids, ...merged.slice(ids.length + 1)];
        },
      };
    };
    const report = verifyChatTemplate({ ...plan, family: buggy });
    expect(report.results.filter((r) => r.layer === "text").every((r) => r.passed)).toBe(true);
    const tito = report.results.filter((r) => r.layer === "tito");
    expect(tito.length).toBeGreaterThan(0);
    expect(tito.every((r) => !r.passed)).toBe(true);
    expect(tito[0].divergence!.expected.slice(60)).toMatch(/^\n/);
  });

  test("checkTitoLayer refuses a position whose next message is an assistant turn", () => {
    const trajectory = pool.find((t) => t.name === "chat_user_turns")!;
    const family = { trailingIds: new Set<number>() } as unknown as TemplateVerifyFamily;
    expect(checkTitoLayer(family, trajectory.messages, 2, null).error).toMatch(/^empty appendix at N=2/);
  });
});

describe("load problems are TemplateVerifyLoadError naming the input", () => {
  test("an unknown family", async () => {
    await expect(loadTemplateVerifyPlan({ titoModel: "qwen9" })).rejects.toBeInstanceOf(TemplateVerifyLoadError);
    await expect(loadTemplateVerifyPlan({ titoModel: "qwen9" })).rejects.toThrow(/^unknown --tito-model "qwen9"; registered families: default, qwen3/);
  });

  test("kwargs that contradict the family's pinned kwarg, with Python's text", async () => {
    await expect(loadTemplateVerifyPlan({ titoModel: "qwen3", chatTemplateKwargs: { clear_thinking: true } })).rejects.toThrow(
      "--chat-template-kwargs: chat template kwarg clear_thinking=True conflicts with the value registered for Qwen3TITOTokenizer: False",
    );
  });

  test("a missing template file and a checkpoint without a template", async () => {
    await expect(loadTemplateVerifyPlan({ titoModel: "qwen3", chatTemplatePath: "no-such-template.jinja" })).rejects.toThrow(
      /^--chat-template-path: cannot read chat template/,
    );
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "verify-template-"));
    try {
      fs.writeFileSync(path.join(dir, "tokenizer_config.json"), "{}");
      fs.symlinkSync(path.join(defaultTokenizerDirectory(), "tokenizer.json"), path.join(dir, "tokenizer.json"));
      await expect(loadTemplateVerifyPlan({ hfCheckpoint: dir })).rejects.toThrow(
        /^checkpoint .* has no chat template \(no "chat_template" in tokenizer_config\.json and no chat_template\.jinja\)$/,
      );
      await expect(loadTemplateVerifyPlan({ titoModel: "default", hfCheckpoint: dir })).rejects.toThrow(
        /^--tito-model default: checkpoint .* has no chat template/,
      );
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
