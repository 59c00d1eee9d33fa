// A session server bound to a non-loopback address warns once at start-up that it has no authentication; one bound
// to loopback stays silent. (The test talks to the server over loopback only.)
import { request } from "undici";
import { startSessionServer } from "../../src/server";

const BACKEND = "http://127.0.0.1:9";

test("binding 0.0.0.0 warns once, naming the address; binding 127.0.0.1 does not warn", async () => {
  const wildcardWarnings: string[] = [];
  const wildcard = await startSessionServer({
    version: "v1",
    backendUrl: BACKEND,
    host: "0.0.0.0",
    logger: { warn: (message) => wildcardWarnings.push(message) },
  });
  const loopbackWarnings: string[] = [];
  const loopback = await startSessionServer({ version: "v1", backendUrl: BACKEND, logger: { warn: (message) => loopbackWarnings.push(message) } });
  try {
    const port = new URL(wildcard.url).port;
    expect(wildcardWarnings).toEqual([
      `listening on non-loopback address 0.0.0.0:${port}: the session server has no authentication, so anyone who can reach this address can read and change sessions`,
    ]);
    expect(loopbackWarnings).toEqual([]);
    // A wildcard-bound server keeps answering (no Host check applies to it); asked over loopback here.
    const health = await request(`http://127.0.0.1:${port}/health`);
    expect(health.statusCode).toBe(200);
    await health.body.text();
    expect(wildcardWarnings).toHaveLength(1);
  } finally {
    await wildcard.close();
    await loopback.close();
  }
});
