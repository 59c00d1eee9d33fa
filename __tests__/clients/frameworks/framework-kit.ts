// What the agent-framework tests share: a guard that keeps every framework off the network, the weather tool's
// schema, and the compatibility loop (each call style on v1 and v2 under each built-in matcher).
import type { MessageMatcherName } from "../../../src/server/message-matchers";
import { expectContinuous, MATCHERS, runInSession, runRefusedInSession, startClientBench, SUMMARY, type ClientBench, type SessionOutcome } from "../harness";
import type { ProcessFunction } from "../../../src/backend";

/** What a framework run reports: its final answer and the inputs its get_weather tool was called with. */
export interface FrameworkDrive {
  finalText: string;
  toolInputs: unknown[];
}

/** One call style of a framework and, per matcher, how it breaks (absent: it keeps one trajectory). */
export interface FrameworkStyle {
  name: string;
  /** Whether the style asks for streamed replies (checked on every chat request it sends). */
  streams: boolean;
  drive: (baseURL: string) => Promise<FrameworkDrive>;
  breaks: Partial<Record<MessageMatcherName, (version: "v1" | "v2", outcome: SessionOutcome) => void>>;
  /** Per matcher, how the server refuses the run (the drive rejects with the client's error); absent: it is not refused. */
  refused?: Partial<Record<MessageMatcherName, (version: "v1" | "v2", refusal: { error: unknown; outcome: SessionOutcome }) => void>>;
  /** Extra checks of a kept trajectory (what the replayed messages look like). */
  continuous?: (matcher: MessageMatcherName, outcome: SessionOutcome) => void;
}

/**
 * Replaces `fetch` for the file's duration with one that refuses every host but loopback, and records the
 * refused URLs (frameworks reach for the network on their own: tracing exporters, tokenizer downloads) and the
 * `stream` flag of every chat request that went through.
 */
function guardNetwork(): { refused: string[]; streamFlags: boolean[] } {
  const refused: string[] = [];
  const streamFlags: boolean[] = [];
  const realFetch = globalThis.fetch;
  beforeAll(() => {
    globalThis.fetch = async (input: Parameters<typeof fetch>[0], init?: RequestInit) => {
      const url = new URL(input instanceof Request ? input.url : String(input));
      if (url.hostname !== "127.0.0.1") {
        refused.push(url.href);
        throw new Error(`network access refused in the framework tests: ${url.href}`);
      }
      if (url.pathname.endsWith("/chat/completions") && typeof init?.body === "string") {
        streamFlags.push((JSON.parse(init.body) as { stream?: boolean }).stream === true);
      }
      return realFetch(input, init);
    };
  });
  afterAll(() => {
    globalThis.fetch = realFetch;
  });
  return { refused, streamFlags };
}

/**
 * Runs every style on both servers under every built-in matcher, and asserts nothing left loopback. `process`
 * replaces the backend's weather script; `label` names the describe block (default: the framework).
 */
export function describeFrameworkStyles(
  framework: string,
  styles: FrameworkStyle[],
  options: { process?: ProcessFunction; expectedToolInputs?: unknown[]; label?: string } = {},
): void {
  describe(options.label ?? framework, () => {
    const network = guardNetwork();
    let bench: ClientBench;
    beforeAll(async () => {
      bench = await startClientBench({ process: options.process });
    });
    afterAll(async () => {
      await bench?.close();
    });

    describe.each(styles)(`${framework} $name`, ({ drive, breaks, refused, continuous, streams }) => {
      test.each(MATCHERS.flatMap((matcher) => (["v1", "v2"] as const).map((version) => ({ matcher, version }))))(
        "$version under $matcher",
        async ({ matcher, version }) => {
          const target = bench.servers.find((s) => s.matcher === matcher && s.version === version)!;
          network.streamFlags.length = 0;
          const refusal = refused?.[matcher];
          if (refusal !== undefined) {
            refusal(version, await runRefusedInSession(target, drive));
            expect(network.streamFlags).toEqual([streams, streams]);
            expect(network.refused).toEqual([]);
            return;
          }
          const { result, outcome } = await runInSession(target, drive);
          expect(network.streamFlags).toEqual([streams, streams]);
          expect(result.finalText).toBe(SUMMARY);
          expect(result.toolInputs).toEqual(options.expectedToolInputs ?? [{ location: "Beijing" }]);
          const broken = breaks[matcher];
          if (broken === undefined) {
            expectContinuous(version, outcome);
            continuous?.(matcher, outcome);
          } else broken(version, outcome);
          expect(network.refused).toEqual([]);
        },
      );
    });
  });
}
