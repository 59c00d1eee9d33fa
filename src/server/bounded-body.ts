// Reads an HTTP request body with a byte limit: refused from Content-Length before reading, or as soon as a
// streamed (chunked) body passes the limit; the rest of the body is then discarded as it arrives, never buffered.
import type { IncomingMessage } from "node:http";

/** Default request body limit of the session server and the mock backend: 64 MiB (long agent histories fit). */
export const DEFAULT_MAX_BODY_BYTES = 64 * 1024 * 1024;

/** A request body longer than the limit; answered with 413. */
export class BodyTooLargeError extends Error {
  override readonly name = "BodyTooLargeError";
  constructor(
    /** The limit in bytes. */
    readonly limit: number,
    /** The declared Content-Length, or null when the body was streamed past the limit. */
    readonly declaredLength: number | null,
  ) {
    super(declaredLength !== null ? `request body of ${declaredLength} bytes exceeds the ${limit}-byte limit` : `request body exceeds the ${limit}-byte limit`);
  }
}

/** A request whose client went away before its body was complete (aborted, reset): nobody is left to answer. */
export class BodyAbortedError extends Error {
  override readonly name = "BodyAbortedError";
  constructor(cause?: unknown) {
    super("the client closed the connection before its request body was complete", { cause });
  }
}

/** Checks a request body limit option: a positive safe integer. */
export function checkMaxBodyBytes(value: number, name = "maxBodyBytes"): number {
  if (!Number.isSafeInteger(value) || value <= 0) throw new Error(`${name} must be a positive integer number of bytes, got ${String(value)}`);
  return value;
}

/**
 * Reads the whole request body, at most `maxBytes` of it. Plain `data`/`end` listeners (one promise per body)
 * and a single-chunk body is returned without a copy.
 *
 * On refusal the promise rejects with {@link BodyTooLargeError} (with {@link BodyAbortedError} when the client went
 * away before the body was complete); what was buffered is dropped and the stream is
 * left flowing with no listener, so the remaining bytes are read and discarded (the connection stays usable for
 * the 413 reply). Node's server also discards an unread body once the reply is finished.
 */
export function readBoundedBody(req: IncomingMessage, maxBytes: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const declared = declaredLength(req);
    if (declared !== null && declared > maxBytes) {
      req.resume();
      reject(new BodyTooLargeError(maxBytes, declared));
      return;
    }
    let chunks: Buffer[] = [];
    let received = 0;
    let settled = false;
    const onData = (chunk: Buffer): void => {
      received += chunk.length;
      if (received <= maxBytes) {
        chunks.push(chunk);
        return;
      }
      settled = true;
      chunks = [];
      req.off("data", onData);
      req.resume();
      reject(new BodyTooLargeError(maxBytes, null));
    };
    req.on("data", onData);
    req.once("end", () => {
      if (settled) return;
      settled = true;
      resolve(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks));
    });
    req.once("error", (error) => {
      if (settled) return;
      settled = true;
      reject(new BodyAbortedError(error));
    });
    req.once("close", () => {
      if (settled) return;
      settled = true;
      reject(new BodyAbortedError());
    });
  });
}

function declaredLength(req: IncomingMessage): number | null {
  const header = req.headers["content-length"];
  if (header === undefined || !/^\d+$/.test(header)) return null;
  return Number(header);
}
