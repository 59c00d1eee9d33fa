// weatherScript finds its key texts with forward searches past the latest hit (lastIndexAfter); these properties pin
// that it decides exactly as the lastIndexOf comparison it replaced, on overlapping and adversarial prompts too.
import fc from "fast-check";
import { lastIndexAfter, weatherScript, WEATHER_SCRIPT_REPLIES } from "../../src/backend/scripts";
import { resolveMockFormats } from "../../src/backend/mock-model";
import type { ProcessResult } from "../../src/backend/types";
import {
  ASSISTANT_INPUT_FOLLOWUP_TEXT,
  FORCE_FINAL_TEXT,
  MOCK_TOOL_RESULTS,
  SYSTEM_REMINDER_TEXT,
  TOOL_CALL_FAILURE_TEXT,
  USER_FOLLOWUP_TEXT,
} from "../../src/agent/texts";
import { expectEqual, expectSame } from "../support/fast-expect";

/** The reference rule: `lastIndexOf`, kept only when it lies past `after`. */
const referenceLastIndexAfter = (text: string, needle: string, after: number): number => {
  const at = text.lastIndexOf(needle);
  return at > after ? at : -1;
};

test("lastIndexAfter answers as lastIndexOf compared with `after`, overlaps and empty needles included", () => {
  const small = fc.string({ unit: fc.constantFrom("a", "b", "ab", "\ud83d", "\ude00") });
  fc.assert(
    fc.property(small, small, fc.integer({ min: -3, max: 40 }), (text, needle, after) => {
      expectSame(lastIndexAfter(text, needle, after), referenceLastIndexAfter(text, needle, after));
    }),
    { numRuns: 2000, seed: 29 },
  );
  expect(lastIndexAfter("aaaa", "aa", -1)).toBe(2);
  expect(lastIndexAfter("aaaa", "aa", 2)).toBe(-1);
  expect(lastIndexAfter("abc", "", 1)).toBe(3);
});

/** The rule table of weatherScript as its documentation states it, with the search it had before (lastIndexOf). */
const RULES: ReadonlyArray<readonly [string, ProcessResult]> = [
  [ASSISTANT_INPUT_FOLLOWUP_TEXT, WEATHER_SCRIPT_REPLIES.assistantInputFinal],
  [FORCE_FINAL_TEXT, WEATHER_SCRIPT_REPLIES.forcedFinal],
  [SYSTEM_REMINDER_TEXT, WEATHER_SCRIPT_REPLIES.oneSentence],
  [TOOL_CALL_FAILURE_TEXT, WEATHER_SCRIPT_REPLIES.retryCall],
  [MOCK_TOOL_RESULTS[3], WEATHER_SCRIPT_REPLIES.snowySummary],
  [MOCK_TOOL_RESULTS[2], WEATHER_SCRIPT_REPLIES.rainySummary],
  [MOCK_TOOL_RESULTS[1], WEATHER_SCRIPT_REPLIES.shanghaiSummary],
  [USER_FOLLOWUP_TEXT, WEATHER_SCRIPT_REPLIES.shanghaiCall],
  [MOCK_TOOL_RESULTS[0], WEATHER_SCRIPT_REPLIES.beijingSummary],
];

function referenceReply(prompt: string): ProcessResult {
  let latest: ProcessResult = WEATHER_SCRIPT_REPLIES.beijingCall;
  let latestAt = -1;
  for (const [needle, reply] of RULES) {
    const at = prompt.lastIndexOf(needle);
    if (at > latestAt) {
      latest = reply;
      latestAt = at;
    }
  }
  return latest;
}

test("weatherScript picks the reply the lastIndexOf rule picks, for prompts made of key texts, their pieces and filler", () => {
  const keys = RULES.map(([needle]) => needle);
  // whole keys, keys cut short (almost-matches), keys glued to each other, chat-template filler
  const piece = fc.oneof(
    fc.constantFrom(...keys),
    fc.constantFrom(...keys).chain((key) => fc.nat({ max: key.length }).map((cut) => key.slice(0, cut))),
    fc.constantFrom("<|im_start|>user\n", "<|im_end|>\n", "<tool_response>\n", " ", "\n"),
    fc.string({ maxLength: 8 }),
  );
  const formats = resolveMockFormats({}).formats;
  fc.assert(
    fc.property(fc.array(piece, { maxLength: 14 }), (pieces) => {
      const prompt = pieces.join("");
      expectEqual(weatherScript(prompt, {}, { headers: new Headers(), formats }), { ...referenceReply(prompt) });
    }),
    { numRuns: 1500, seed: 29 },
  );
});
