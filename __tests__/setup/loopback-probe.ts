// Probes a loopback URL over a fresh connection each time, so a kept-alive socket never hides a closed port.
// Test helper (no .test.ts suffix): the setup and fixture suites prove ports closed with it.
import { Client } from "undici";

/** GETs `<url>/health` on a new connection and returns status and JSON body; rejects when nothing listens. */
export async function probeHealth(url: string): Promise<{ status: number; body: unknown }> {
  const client = new Client(url);
  try {
    const reply = await client.request({ method: "GET", path: "/health" });
    const text = await reply.body.text();
    return { status: reply.statusCode, body: text === "" ? null : (JSON.parse(text) as unknown) };
  } finally {
    await client.destroy();
  }
}
