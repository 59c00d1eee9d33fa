// The driver schedule derived from allowed append roles and cycles (SPEC §10).
// Pure: every role set, one and several cycles, and the bad inputs refused by name.
import { buildDriverSchedule, QWEN3_APPEND_ROLES } from "../../src/agent";

describe("buildDriverSchedule", () => {
  test("all four roles, one cycle: 8 actions after the initial call (9 chat calls)", () => {
    expect(buildDriverSchedule(QWEN3_APPEND_ROLES, 1)).toEqual([
      "tool_result",
      "user_followup",
      "tool_result",
      "system_reminder",
      "rollback",
      "rollback",
      "force_final",
      "assistant_input",
    ]);
  });

  test("more cycles repeat the cycle after the extra rollback", () => {
    const cycle = ["tool_result", "user_followup", "tool_result", "system_reminder", "rollback"];
    expect(buildDriverSchedule(["assistant", "system", "user", "tool"], 3)).toEqual([
      ...cycle,
      "rollback",
      ...cycle,
      ...cycle,
      "force_final",
      "assistant_input",
    ]);
  });

  test("tool only: no user/system steps, no force_final, no assistant input", () => {
    expect(buildDriverSchedule(["tool"], 2)).toEqual(["tool_result", "rollback", "rollback", "tool_result", "rollback"]);
  });

  test("tool and assistant without user", () => {
    expect(buildDriverSchedule(["tool", "assistant"], 1)).toEqual(["tool_result", "rollback", "rollback", "assistant_input"]);
  });

  test("tool and user: the follow-up and its tool result, force_final, no system reminder", () => {
    expect(buildDriverSchedule(["user", "tool"], 2)).toEqual([
      ...["tool_result", "user_followup", "tool_result", "rollback"],
      "rollback",
      ...["tool_result", "user_followup", "tool_result", "rollback"],
      "force_final",
    ]);
  });

  test("tool and system: the reminder but no follow-up and no force_final; duplicate roles count once", () => {
    expect(buildDriverSchedule(["tool", "system", "system"], 1)).toEqual(["tool_result", "system_reminder", "rollback", "rollback"]);
  });

  test("bad inputs are refused by name", () => {
    expect(() => buildDriverSchedule(["tool", "developer"], 1)).toThrow(/unknown append roles \["developer"\]/);
    expect(() => buildDriverSchedule(["user", "system"], 1)).toThrow(/needs the "tool" append role/);
    expect(() => buildDriverSchedule(["tool"], 0)).toThrow(/cycles must be an integer >= 1, got 0/);
    expect(() => buildDriverSchedule(["tool"], 1.5)).toThrow(/cycles must be an integer >= 1, got 1.5/);
  });
});
