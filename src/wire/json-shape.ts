// Counts what a JSON text would build (containers, and the items at one depth) by one forward scan of its bytes,
// before any parser sees it: the decoder's caps then hold whatever the key spelling, and refusing costs no memory.

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;

/** What {@link scanJsonShape} counted, up to where it stopped. */
export interface JsonShape {
  /** Objects and arrays opened (outside strings). */
  containers: number;
  /** Items directly inside containers of the chosen kind at the chosen depth (elements, or object members). */
  items: number;
  /** Bytes read (the whole text, or up to the byte that passed a cap). */
  scanned: number;
}

/** Which items {@link scanJsonShape} counts: those of arrays (elements) or of objects (members) at `depth`. */
export interface JsonShapeQuery {
  /** Nesting depth of the containers whose items count (the top-level value is depth 1). */
  depth: number;
  kind: "array" | "object";
  /** The scan stops once more than this many items were counted. */
  maxItems: number;
  /** The scan stops once more than this many containers were opened. */
  maxContainers: number;
}

/**
 * Scans JSON bytes once and counts the containers opened and the items of the `query.kind` containers at
 * `query.depth`, by structure alone: a key spelled with escapes, an omitted key or extra whitespace counts the same.
 * Stops at the first count past its cap, so refusing costs time proportional to the bytes read up to there and
 * allocates nothing. Does not validate: malformed text is left to the parser.
 */
export function scanJsonShape(bytes: Uint8Array, query: JsonShapeQuery): JsonShape {
  const { depth: itemDepth, maxItems, maxContainers } = query;
  const opener = query.kind === "array" ? OPEN_BRACKET : OPEN_BRACE;
  const length = bytes.length;
  let depth = 0;
  let containers = 0;
  let items = 0;
  /** Whether the container at `itemDepth` we are in counts (its kind is the queried one). */
  let counting = false;
  /** Just opened a counted container: its first item, if any, is the next value. */
  let fresh = false;
  let i = 0;
  for (; i < length; i++) {
    const code = bytes[i];
    if (code <= 0x20) continue; // whitespace (and control bytes the parser refuses)
    if (fresh) {
      fresh = false;
      if (code !== CLOSE_BRACKET && code !== CLOSE_BRACE && ++items > maxItems) break;
    }
    if (code === QUOTE) {
      for (i++; i < length; i++) {
        const c = bytes[i];
        if (c === QUOTE) break;
        if (c === BACKSLASH) i++;
      }
    } else if (code === OPEN_BRACKET || code === OPEN_BRACE) {
      if (++containers > maxContainers) break;
      if (++depth === itemDepth) {
        counting = code === opener;
        fresh = counting;
      }
    } else if (code === CLOSE_BRACKET || code === CLOSE_BRACE) {
      if (depth > 0) depth--;
    } else if (code === COMMA && depth === itemDepth && counting && ++items > maxItems) break;
  }
  return { containers, items, scanned: Math.min(i + 1, length) };
}
