// A loopback proxy in front of the backend for suites that must see the exact bytes a session server sends upstream
// and receives back: each chat exchange goes through the suite's callback, which may also hand back other reply bytes.

import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { request } from "undici";

/** A running proxy: its URL and how to stop it. */
export interface ForwardingProxy {
  url: string;
  close: () => Promise<void>;
}

/**
 * Starts the proxy. Every request is forwarded to `backendUrl` as it came; for a chat call, `onChat` sees the raw
 * request body, the backend's status and reply bytes, and its result (when given) is sent to the session server
 * instead of those bytes. A failed forward answers 502 with the error's text.
 */
export async function startForwardingProxy(
  backendUrl: string,
  onChat: (requestBody: Buffer, status: number, replyBytes: Buffer) => Buffer | void,
): Promise<ForwardingProxy> {
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const body = Buffer.concat(chunks);
      void request(`${backendUrl}${req.url ?? "/"}`, {
        method: (req.method ?? "GET") as "GET",
        headers: { "content-type": "application/json" },
        body: body.length > 0 ? body : undefined,
      })
        .then(async (reply) => {
          let bytes: Buffer = Buffer.from(await reply.body.arrayBuffer());
          if (req.url?.endsWith("/chat/completions") === true) bytes = onChat(body, reply.statusCode, bytes) ?? bytes;
          res.writeHead(reply.statusCode, { "content-type": String(reply.headers["content-type"] ?? "application/json") });
          res.end(bytes);
        })
        .catch((error: unknown) => {
          res.writeHead(502);
          res.end(String(error));
        });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
