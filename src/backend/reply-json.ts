// The mock backend's JSON writer: JSON.stringify's compact text, except that a negative zero is written `-0.0`
// as SGLang's Python JSON writes it (JSON.stringify would write `0` and lose the sign before any client sees it).

/**
 * Serializes a reply body compactly. Same text as `JSON.stringify(value)` (toJSON, undefined members and all),
 * except that every `-0` is written `-0.0`, so a parity run carries the mock's first log-prob (`-0/128`) as the
 * negative zero SGLang would send.
 */
export function stringifyReplyJson(value: unknown): string {
  const write = (node: unknown): string | undefined => {
    if (typeof node === "number") return Object.is(node, -0) ? "-0.0" : JSON.stringify(node);
    if (node === null || typeof node !== "object" || typeof (node as { toJSON?: unknown }).toJSON === "function") return JSON.stringify(node);
    if (Array.isArray(node)) return `[${node.map((item) => write(item) ?? "null").join(",")}]`;
    const parts: string[] = [];
    for (const [key, item] of Object.entries(node as Record<string, unknown>)) {
      const text = write(item);
      if (text !== undefined) parts.push(`${JSON.stringify(key)}:${text}`);
    }
    return `{${parts.join(",")}}`;
  };
  return write(value) as string;
}
