// Compares accumulated session token ids with the canonical render, segment by segment (the tito_session_mismatch report).
// Pure logic over ids plus a decode function; no I/O.

/** The four kinds of difference the report distinguishes (SPEC §8). */
export type TitoMismatchType = "special_token_count" | "special_token_type" | "assistant_text" | "non_assistant_text";

/**
 * One `tito_session_mismatch` entry. A type alias (not an interface) so it is assignable to JSON object types.
 * `segment_index` is -1 for structural (`special_token_count`) entries.
 */
export type TitoMismatchEntry = {
  type: TitoMismatchType;
  segment_index: number;
  expected_text: string;
  actual_text: string;
  detail: string;
};

/** A run of ids: one special token, or the content between two special tokens. */
export interface TokenSegment {
  ids: number[];
  special: boolean;
}

/** What the comparator needs to know about the tokenizer family. */
export interface MismatchComparatorOptions {
  /** Ids that cut segments (each becomes its own single-id segment). */
  specialIds: ReadonlySet<number>;
  /** Ids stripped from the end of both sequences before comparing (Qwen3: "\n"). */
  trailingIds: ReadonlySet<number>;
  /** Decoded text that opens an assistant turn, e.g. "<|im_start|>assistant". */
  assistantStart: string;
  /** Decodes ids keeping special tokens. */
  decode: (ids: readonly number[]) => string;
}

/** How many content ids are decoded to recognise the role label after a special token. */
const ROLE_PROBE_IDS = 20;

/** Splits ids into segments at special ids; each special id is a segment of its own. */
export function segmentBySpecialIds(ids: readonly number[], specialIds: ReadonlySet<number>): TokenSegment[] {
  const segments: TokenSegment[] = [];
  let content: number[] = [];
  for (const id of ids) {
    if (specialIds.has(id)) {
      if (content.length > 0) segments.push({ ids: content, special: false });
      content = [];
      segments.push({ ids: [id], special: true });
    } else {
      content.push(id);
    }
  }
  if (content.length > 0) segments.push({ ids: content, special: false });
  return segments;
}

function withoutTrailing(ids: readonly number[], trailing: ReadonlySet<number>): readonly number[] {
  let end = ids.length;
  while (end > 0 && trailing.has(ids[end - 1]!)) end -= 1;
  return end === ids.length ? ids : ids.slice(0, end);
}

function sameIds(a: readonly number[], b: readonly number[]): boolean {
  return a.length === b.length && a.every((id, i) => id === b[i]);
}

/** Compares canonical (expected) ids with accumulated (actual) ids and lists every difference. */
export class MismatchComparator {
  constructor(private readonly options: MismatchComparatorOptions) {}

  /** The report: empty when the sequences agree segment for segment. */
  compare(expectedIds: readonly number[], actualIds: readonly number[]): TitoMismatchEntry[] {
    const { specialIds, trailingIds } = this.options;
    const expected = segmentBySpecialIds(withoutTrailing(expectedIds, trailingIds), specialIds);
    const actual = segmentBySpecialIds(withoutTrailing(actualIds, trailingIds), specialIds);

    const structural = this.structureDifference(expected, actual);
    if (structural) return [structural];

    const entries: TitoMismatchEntry[] = [];
    for (let index = 0; index < expected.length; index += 1) {
      const exp = expected[index]!;
      const act = actual[index]!;
      if (sameIds(exp.ids, act.ids)) continue;
      const expectedText = this.options.decode(exp.ids);
      const actualText = this.options.decode(act.ids);
      if (exp.special) {
        entries.push({
          type: "special_token_type",
          segment_index: index,
          expected_text: expectedText,
          actual_text: actualText,
          detail: `special token ${exp.ids[0]} expected, got ${act.ids[0]}`,
        });
        continue;
      }
      if (expectedText === actualText) continue; // same text, different tokenization: not reported
      const assistant = this.isAssistantContent(expected, index) && this.isAssistantContent(actual, index);
      entries.push({
        type: assistant ? "assistant_text" : "non_assistant_text",
        segment_index: index,
        expected_text: expectedText,
        actual_text: actualText,
        detail: assistant
          ? "assistant content differs from the canonical render"
          : "non-assistant content differs from the canonical render",
      });
    }
    return entries;
  }

  private structureDifference(expected: TokenSegment[], actual: TokenSegment[]): TitoMismatchEntry | null {
    let detail: string;
    if (expected.length !== actual.length) {
      detail = `segment count differs: expected ${expected.length}, got ${actual.length}`;
    } else if (expected.some((segment, i) => segment.special !== actual[i]!.special)) {
      detail = "segment structure (special/content pattern) differs";
    } else {
      return null;
    }
    return {
      type: "special_token_count",
      segment_index: -1,
      expected_text: this.describe(expected),
      actual_text: this.describe(actual),
      detail,
    };
  }

  private isAssistantContent(segments: TokenSegment[], index: number): boolean {
    const segment = segments[index]!;
    const previous = segments[index - 1];
    if (segment.special || !previous || !previous.special) return false;
    const opening = this.options.decode(previous.ids) + this.options.decode(segment.ids.slice(0, ROLE_PROBE_IDS));
    return opening.startsWith(this.options.assistantStart);
  }

  private describe(segments: TokenSegment[]): string {
    return segments
      .map((segment) => (segment.special ? `[${this.options.decode(segment.ids)}]` : `(${segment.ids.length} tokens)`))
      .join(" ");
  }
}
