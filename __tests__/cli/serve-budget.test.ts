// `session-parity serve`'s session-budget and miles-revision flags: parsed by the real command, mapped onto the
// server options (in-process through runServe, so no process is spawned), and refused with a usage error when bad.
import { startMockBackend, echoScript, type MockBackend } from "../../src/backend";
import { runServe, serveCommand, type ServeCommandOptions } from "../../src/cli/serve-command";
import { call, chat, createSession, getSession } from "../server/helpers";

let backend: MockBackend;

beforeAll(async () => {
  backend = await startMockBackend({ process: echoScript });
});
afterAll(async () => {
  await backend.close();
});

function serveOptions(extra: Partial<ServeCommandOptions>): ServeCommandOptions {
  return { version: "v1", backend: backend.url, port: 0, host: "127.0.0.1", messageMatcher: "strict", quiet: true, ...extra };
}

test("--max-sessions, --max-session-bytes and --miles-revision reach the server", async () => {
  const server = await runServe(serveOptions({ maxSessions: 1, maxSessionBytes: 8_000_000, milesRevision: "31f1ca96" }), { log: () => undefined });
  try {
    expect(server.sessionUsage().budgetBytes).toBe(8_000_000);
    const id = await createSession(server.url);
    const refused = await call("POST", `${server.url}/sessions`);
    expect(refused.status).toBe(503);
    expect(refused.json<{ error: string }>().error).toContain("(maxSessions / --max-sessions)");
    // The snapshot's retry order: a refused retry keeps its rollback.
    const u = { role: "user", content: "hi" };
    const a1 = (await chat(server.url, id, { messages: [u] })).json<{ choices: Array<{ message: unknown }> }>().choices[0].message;
    const a2 = (await chat(server.url, id, { messages: [u, a1, { role: "user", content: "next" }] })).json<{ choices: Array<{ message: unknown }> }>()
      .choices[0].message;
    expect(a2).toBeDefined();
    expect((await chat(server.url, id, { messages: [u, a1, { role: "developer", content: "x" }] })).status).toBe(400);
    expect((await getSession(server.url, id)).records).toHaveLength(1);
  } finally {
    await server.close();
  }
});

test.each([
  ["--max-session-bytes", "0"],
  ["--max-sessions", "many"],
  ["--session-ttl", "-3"],
  ["--miles-revision", "main"],
])("%s %s is a usage error naming the flag", async (flag, value) => {
  const command = serveCommand()
    .exitOverride()
    .configureOutput({ writeErr: () => undefined, writeOut: () => undefined });
  command.action(() => undefined);
  await expect(command.parseAsync(["v1", "--backend", "http://127.0.0.1:1", flag, value], { from: "user" })).rejects.toThrow(flag);
});

test("a huge --session-ttl is refused in seconds, the unit it was given in", async () => {
  const command = serveCommand()
    .exitOverride()
    .configureOutput({ writeErr: () => undefined, writeOut: () => undefined });
  command.action(() => undefined);
  for (const value of ["9007199254741", "99999999999999999999"]) {
    await expect(command.parseAsync(["v1", "--backend", "http://127.0.0.1:1", "--session-ttl", value], { from: "user" })).rejects.toThrow(
      `option '--session-ttl <seconds>' argument '${value}' is invalid. must be at most 9007199254740 seconds (about 285,000 years; omit it for no expiry)`,
    );
  }
  // the largest accepted value reaches the server as milliseconds it accepts
  const server = await runServe(serveOptions({ sessionTtl: 9007199254740 }), { log: () => undefined });
  try {
    expect((await call("POST", `${server.url}/sessions`)).status).toBe(200);
  } finally {
    await server.close();
  }
});
