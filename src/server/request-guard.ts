// Browser-facing safety of a server on loopback: a page on another site must not reach it through DNS
// rebinding (Host check) nor write to it with a CORS-simple POST (JSON content type required).
import type { IncomingHttpHeaders } from "node:http";
import { isIP } from "node:net";

/** A refused request: the status and the `{"error"}` message. */
export interface GuardRefusal {
  status: number;
  message: string;
}

/** True for 127.0.0.0/8, ::1, `localhost` (and IPv4-mapped loopback). */
export function isLoopbackHost(host: string): boolean {
  const bare = host.replace(/^\[|\]$/g, "").toLowerCase();
  if (bare === "localhost" || bare.endsWith(".localhost")) return true;
  if (bare === "::1" || bare === "0:0:0:0:0:0:0:1") return true;
  const v4 = bare.startsWith("::ffff:") ? bare.slice(7) : bare;
  return isIP(v4) === 4 && v4.startsWith("127.");
}

/**
 * The `Host` values a loopback-bound server answers: the bound address, `localhost` and `127.0.0.1` / `[::1]`,
 * each with the bound port. Returns null when the server is bound to a non-loopback address (no Host check:
 * it is reachable under names it cannot know; the start-up warning covers that case).
 */
export function allowedHostsFor(boundAddress: string, port: number): Set<string> | null {
  if (!isLoopbackHost(boundAddress)) return null;
  const bound = boundAddress.includes(":") ? `[${boundAddress}]` : boundAddress;
  return new Set([bound, "localhost", "127.0.0.1", "[::1]"].map((name) => `${name.toLowerCase()}:${port}`));
}

/** True for `application/json` and any `+json` media type (parameters such as charset allowed). */
export function isJsonContentType(value: string | undefined): boolean {
  if (value === undefined) return false;
  const type = value.split(";")[0].trim().toLowerCase();
  return type === "application/json" || (type.startsWith("application/") && type.endsWith("+json"));
}

/**
 * Checks a request before its body is read. A missing Host (HTTP/1.0 tools) is let through: a browser always
 * sends one. A POST that declares or streams a body must say it is JSON.
 */
export function guardRequest(method: string, headers: IncomingHttpHeaders, allowedHosts: ReadonlySet<string> | null): GuardRefusal | null {
  const host = headers.host;
  if (allowedHosts !== null && host !== undefined && !allowedHosts.has(host.toLowerCase())) {
    return {
      status: 403,
      message: `Host ${JSON.stringify(host)} is not this server's loopback address; refused as a possible DNS-rebinding request (allowed: ${[...allowedHosts].join(", ")})`,
    };
  }
  const hasBody = headers["transfer-encoding"] !== undefined || (headers["content-length"] !== undefined && headers["content-length"] !== "0");
  if (method === "POST" && hasBody && !isJsonContentType(headers["content-type"])) {
    return {
      status: 415,
      message: `POST bodies must be sent with content-type application/json, got ${JSON.stringify(headers["content-type"] ?? null)}`,
    };
  }
  return null;
}
