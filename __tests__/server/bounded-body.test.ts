// The bounded body reader over a real loopback socket: a client that goes away mid-body is a BodyAbortedError (the
// session server answers nothing and logs no fault for it), a body past the limit a BodyTooLargeError.
import { createServer, type IncomingMessage, type Server } from "node:http";
import { connect, type AddressInfo } from "node:net";
import { BodyAbortedError, BodyTooLargeError, readBoundedBody } from "../../src/server/bounded-body";

/** A server whose handler reads each body with `maxBytes` and hands the outcome to `seen`. */
async function reader(maxBytes: number, seen: (outcome: Buffer | Error) => void): Promise<{ server: Server; port: number }> {
  const server = createServer((req: IncomingMessage, res) => {
    readBoundedBody(req, maxBytes).then(
      (body) => {
        seen(body);
        res.end("ok");
      },
      (error: Error) => {
        seen(error);
        res.destroy();
      },
    );
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { server, port: (server.address() as AddressInfo).port };
}

test("a client that closes mid-body is a BodyAbortedError naming what happened", async () => {
  let outcome: (value: Buffer | Error) => void = () => undefined;
  const result = new Promise<Buffer | Error>((resolve) => (outcome = resolve));
  const { server, port } = await reader(1_000_000, outcome);
  try {
    const socket = connect(port, "127.0.0.1");
    await new Promise<void>((resolve) => socket.once("connect", resolve));
    // 10 of the 1,000 declared bytes, then the client goes away once the server holds the request
    socket.write('POST /sessions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"max_seq_');
    server.once("request", () => socket.destroy());
    const error = await result;
    expect(error).toBeInstanceOf(BodyAbortedError);
    expect((error as Error).message).toBe("the client closed the connection before its request body was complete");
  } finally {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
});

test("a body past the limit is still a BodyTooLargeError, not an abort", async () => {
  let outcome: (value: Buffer | Error) => void = () => undefined;
  const result = new Promise<Buffer | Error>((resolve) => (outcome = resolve));
  const { server, port } = await reader(8, outcome);
  try {
    const reply = fetch(`http://127.0.0.1:${port}/`, { method: "POST", body: "0123456789abcdef" }).catch(() => null);
    const error = await result;
    expect(error).toBeInstanceOf(BodyTooLargeError);
    expect((error as Error).message).toBe("request body of 16 bytes exceeds the 8-byte limit");
    await reply;
  } finally {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
});
