// The whole-reply exchange under the agent and the fixture: bodies in pieces, repeated headers, a body that breaks
// off after its status, a refused connection, and the text/bytes helpers, over real loopback HTTP.
import { afterAll, beforeAll, describe, expect, test } from "@jest/globals";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import fc from "fast-check";
import { Agent, util } from "undici";
import { postChatCompletion } from "../../src/agent";
import { BrokenReplyError, fetchWholeReply, ownedBytes, rawHeaderText, replyText, requestTarget } from "../../src/agent/whole-reply";
import { expectSame } from "../support/fast-expect";

let server: Server;
let origin: string;
const agent = new Agent({ keepAliveTimeout: 1_000 });

beforeAll(async () => {
  server = createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      if (req.url?.startsWith("/pieces?") === true) {
        res.writeHead(201, { "Content-Type": "text/plain", "Set-Cookie": ["a=1", "b=2"] });
        res.write("\ufeffone ");
        res.write("two ");
        setImmediate(() => res.end(`three ${req.method ?? ""}`));
        return;
      }
      if (req.url === "/broken") {
        res.writeHead(200, { "content-type": "text/event-stream", "content-length": "1000" });
        res.write('data: {"partial":', () => res.destroy());
        return;
      }
      res.writeHead(204);
      res.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await agent.close();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

describe("fetchWholeReply", () => {
  test("joins a body written in pieces and keeps status and lower-case headers, repeated ones as arrays", async () => {
    const reply = await fetchWholeReply(requestTarget(`${origin}/pieces?x=1`), { method: "POST", body: "{}", dispatcher: agent });
    expect(reply.statusCode).toBe(201);
    expect(reply.headers["content-type"]).toBe("text/plain");
    expect(reply.headers["set-cookie"]).toEqual(["a=1", "b=2"]);
    expect(replyText(reply.body)).toBe("one two three POST");
  });

  test("header() reads one header as the parsed headers do, before and after they are built", async () => {
    const reply = await fetchWholeReply(requestTarget(`${origin}/pieces?x=2`), { method: "POST", body: "{}", dispatcher: agent });
    expect([reply.header("content-type"), reply.header("set-cookie"), reply.header("x-absent")]).toEqual(["text/plain", "a=1,b=2", ""]);
    expect(reply.headers["set-cookie"]).toEqual(["a=1", "b=2"]);
    expect([reply.header("content-type"), reply.header("set-cookie"), reply.header("x-absent")]).toEqual(["text/plain", "a=1,b=2", ""]);
  });

  test("a bodiless reply has an empty body; the global dispatcher serves a call given none", async () => {
    const reply = await fetchWholeReply(requestTarget(`${origin}/empty`), { method: "DELETE" });
    expect(reply.statusCode).toBe(204);
    expect(reply.body.length).toBe(0);
  });

  test("a body that breaks off after the status is a BrokenReplyError naming that status", async () => {
    const failure = await fetchWholeReply(requestTarget(`${origin}/broken`), { method: "GET", dispatcher: agent }).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(BrokenReplyError);
    expect((failure as BrokenReplyError).statusCode).toBe(200);
    expect((failure as BrokenReplyError).message).toMatch(/^the reply \(status 200\) broke off: /);
  });

  test("the agent names a broken stream with its status, a refused connection as a transport error", async () => {
    await expect(postChatCompletion({ url: `${origin}/broken`, body: { messages: [] }, dispatcher: agent, step: "initial" })).rejects.toThrow(
      /initial chat call failed \(status 200\): SSE stream broke: /,
    );
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const refused = await fetchWholeReply(requestTarget(`http://127.0.0.1:${port}/`), { method: "GET", dispatcher: agent }).catch((error: unknown) => error);
    // undici's own error (from Node's realm, so no instanceof check against this one's Error)
    expect(String((refused as { code?: unknown }).code)).toBe("ECONNREFUSED");
    expect(refused).not.toBeInstanceOf(BrokenReplyError);
    await expect(postChatCompletion({ url: `http://127.0.0.1:${port}/v1/chat/completions`, body: {}, dispatcher: agent, step: "initial" })).rejects.toThrow(
      /initial chat call failed \(status 0\): transport error: .*ECONNREFUSED/,
    );
    await expect(postChatCompletion({ url: "not a url", body: {}, step: "initial" })).rejects.toThrow(/status 0\): invalid URL "not a url"/);
  });
});

describe("rawHeaderText", () => {
  // names in any case (known to undici's lookup tree or not), latin1 bytes, repeats, empty values
  const name = fc.constantFrom(
    "content-type",
    "Content-Type",
    "CONTENT-TYPE",
    "content-typ",
    "content-type ",
    "CONTENT-TYP\u00c9",
    "x-a",
    "X-A",
    "__proto__",
    "constructor",
  );
  const value = fc.oneof(
    fc.constantFrom("text/event-stream", "", "a,b", "text/plain; charset=utf-8"),
    fc.uint8Array({ maxLength: 6 }).map((b) => Buffer.from(b).toString("latin1")),
  );
  test('equals String(util.parseHeaders(raw)[name] ?? "") for any raw list', () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(name, value), { maxLength: 8 }),
        fc.constantFrom("content-type", "x-a", "__proto__", "constructor", "absent"),
        (pairs, wanted) => {
          const raw = pairs.flatMap(([key, text]) => [Buffer.from(key, "latin1"), Buffer.from(text, "latin1")]);
          const parsed = util.parseHeaders(raw) as Record<string, string | string[] | undefined>;
          const expected = Object.hasOwn(parsed, wanted) ? String(parsed[wanted]) : "";
          expectSame(rawHeaderText(raw, wanted), expected);
        },
      ),
      { numRuns: 1000 },
    );
  });
});

describe("reply bytes", () => {
  test("replyText drops one leading byte-order mark and decodes UTF-8; ownedBytes copies only views", () => {
    expect(replyText(Buffer.from("\ufeff\ufeffé"))).toBe("\ufeffé");
    expect(replyText(new Uint8Array(0))).toBe("");
    const whole = new Uint8Array([1, 2, 3]);
    expect(ownedBytes(whole)).toBe(whole);
    const view = new Uint8Array(new ArrayBuffer(64), 8, 3);
    view.set([7, 8, 9]);
    const owned = ownedBytes(view);
    expect(owned).not.toBe(view);
    expect([...owned]).toEqual([7, 8, 9]);
    expect(owned.byteOffset).toBe(0);
    expect(owned.buffer.byteLength).toBe(3);
  });
});
