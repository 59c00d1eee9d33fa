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
  /** Decoded text that opens an assistant turn, e.g. "<|im_start|>assistant"; null: no segment counts as assistant (miles' base class). */
  assistantStart: string | null;
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

/** Length of `ids` once trailing ids (Qwen3: "\n") are stripped. */
function endWithoutTrailing(ids: readonly number[], trailing: ReadonlySet<number>): number {
  let end = ids.length;
  while (end > 0 && trailing.has(ids[end - 1])) end -= 1;
  return end;
}

function sameRun(a: readonly number[], aStart: number, aEnd: number, b: readonly number[], bStart: number, bEnd: number): boolean {
  if (aEnd - aStart !== bEnd - bStart) return false;
  for (let offset = 0; offset < aEnd - aStart; offset += 1) if (a[aStart + offset] !== b[bStart + offset]) return false;
  return true;
}

/** Membership test for special ids: a flag table for small non-negative integer ids, the set for anything else. */
class SpecialIdTest {
  private readonly flags: Uint8Array;

  constructor(private readonly specialIds: ReadonlySet<number>) {
    let max = -1;
    for (const id of specialIds) if (Number.isInteger(id) && id >= 0 && id < 1 << 24) max = Math.max(max, id);
    this.flags = new Uint8Array(max + 1);
    for (const id of specialIds) if (Number.isInteger(id) && id >= 0 && id <= max) this.flags[id] = 1;
  }

  has(id: number): boolean {
    const flag = this.flags[id];
    return flag === undefined ? this.specialIds.has(id) : flag === 1;
  }
}

/**
 * Segments as offsets into the id array, without copying ids: segment k spans `starts[k]` to `starts[k + 1]`
 * (the last one to `end`); it is special when its first id is.
 */
class SegmentView {
  readonly starts: number[] = [];

  constructor(
    readonly ids: readonly number[],
    readonly end: number,
    private readonly special: SpecialIdTest,
  ) {
    let inContent = false;
    for (let index = 0; index < end; index += 1) {
      if (special.has(ids[index])) {
        this.starts.push(index);
        inContent = false;
      } else if (!inContent) {
        this.starts.push(index);
        inContent = true;
      }
    }
  }

  get count(): number {
    return this.starts.length;
  }

  startOf(segment: number): number {
    return this.starts[segment];
  }

  endOf(segment: number): number {
    return segment + 1 < this.starts.length ? this.starts[segment + 1] : this.end;
  }

  isSpecial(segment: number): boolean {
    return this.special.has(this.ids[this.starts[segment]]);
  }

  /** The segment's ids (a copy), or its first `limit` ids. */
  idsOf(segment: number, limit = Infinity): number[] {
    const start = this.startOf(segment);
    return this.ids.slice(start, Math.min(this.endOf(segment), start + limit));
  }
}

/**
 * Compares canonical (expected) ids with accumulated (actual) ids and lists every difference. Linear in the ids:
 * identical sequences return after one pass, segments are offsets (no copies), and only segments whose ids
 * differ are decoded.
 */
export class MismatchComparator {
  private readonly special: SpecialIdTest;

  constructor(private readonly options: MismatchComparatorOptions) {
    this.special = new SpecialIdTest(options.specialIds);
  }

  /** The report: empty when the sequences agree segment for segment. */
  compare(expectedIds: readonly number[], actualIds: readonly number[]): TitoMismatchEntry[] {
    const { trailingIds } = this.options;
    const expectedEnd = endWithoutTrailing(expectedIds, trailingIds);
    const actualEnd = endWithoutTrailing(actualIds, trailingIds);
    if (sameRun(expectedIds, 0, expectedEnd, actualIds, 0, actualEnd)) return [];
    const expected = new SegmentView(expectedIds, expectedEnd, this.special);
    const actual = new SegmentView(actualIds, actualEnd, this.special);

    const structural = this.structureDifference(expected, actual);
    if (structural) return [structural];

    const entries: TitoMismatchEntry[] = [];
    for (let index = 0; index < expected.count; index += 1) {
      if (sameRun(expectedIds, expected.startOf(index), expected.endOf(index), actualIds, actual.startOf(index), actual.endOf(index))) {
        continue;
      }
      const expectedText = this.options.decode(expected.idsOf(index));
      const actualText = this.options.decode(actual.idsOf(index));
      if (expected.isSpecial(index)) {
        entries.push({
          type: "special_token_type",
          segment_index: index,
          expected_text: expectedText,
          actual_text: actualText,
          detail: "", // as Python's Mismatch.to_dict: only structural entries carry a detail
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
        detail: "",
      });
    }
    return entries;
  }

  private structureDifference(expected: SegmentView, actual: SegmentView): TitoMismatchEntry | null {
    let detail: string;
    if (expected.count !== actual.count) {
      detail = `segment count differs: expected ${expected.count}, got ${actual.count}`;
    } else if (!samePattern(expected, actual)) {
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

  private isAssistantContent(segments: SegmentView, index: number): boolean {
    if (this.options.assistantStart === null) return false;
    if (index === 0 || segments.isSpecial(index) || !segments.isSpecial(index - 1)) return false;
    const opening = this.options.decode(segments.idsOf(index - 1)) + this.options.decode(segments.idsOf(index, ROLE_PROBE_IDS));
    return opening.startsWith(this.options.assistantStart);
  }

  private describe(segments: SegmentView): string {
    const parts: string[] = [];
    for (let index = 0; index < segments.count; index += 1) {
      parts.push(segments.isSpecial(index) ? `[${this.options.decode(segments.idsOf(index))}]` : `(${segments.endOf(index) - segments.startOf(index)} tokens)`);
    }
    return parts.join(" ");
  }
}

function samePattern(expected: SegmentView, actual: SegmentView): boolean {
  for (let index = 0; index < expected.count; index += 1) if (expected.isSpecial(index) !== actual.isSpecial(index)) return false;
  return true;
}
