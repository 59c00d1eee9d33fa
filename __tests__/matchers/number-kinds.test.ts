// Python number kinds through the whole chain: two samples replies that differ only in spelling a float as an int
// (`1.0` vs `1`) decode apart, and every matcher, the snapshot text and the report tell them apart while each payload
// still equals itself. The Python side mirrors the seed's `_bit_tree`: ("float64", bytes) for a float, (int, n) for an int.
import { compareBitwise, formatDifferences, pyFloat, pyInt, PyBigInt, PyFloat, Sample, type JsonValue } from "../../src";
import { decodeSamplesReply, encodeSamples, readSafetensors, WIRE_FIELDS_V2, type SamplesReply } from "../../src/wire";
import { parseBitTree, serializeBitTree } from "../../src/snapshot";
import { pairView, renderHtmlReport } from "../../src/report";
import { checkTrainingPayloadParity } from "../../src/matchers/training-payload-parity";
import { float64Hex } from "../../src/matchers/float-bits";
import { pythonMissing, runPythonScript } from "../python/python3";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { SessionClient } from "../../src/fixture/session-client";
import { thrownMessage } from "./helpers";
import type { SessionParityRun } from "../../src/fixture/types";

interface Spelling {
  reward: JsonValue;
  score: JsonValue;
  agentReward: JsonValue;
  big?: JsonValue;
  zero?: JsonValue;
}

const FLOATS: Spelling = { reward: pyFloat(1), score: pyFloat(2), agentReward: pyFloat(1) };
const INTS: Spelling = { reward: 1, score: 2, agentReward: 1 };

/** A samples reply as a server writes it, with the given spellings of the three scalar values. */
function payload(spelling: Spelling): Uint8Array {
  const sample = new Sample({
    tokens: [11, 12, 13],
    response: "x",
    response_length: 1,
    loss_mask: [1],
    rollout_log_probs: [-0.5],
    status: "completed",
    reward: spelling.reward,
    metadata: {
      score: spelling.score,
      ...(spelling.big === undefined ? {} : { big: spelling.big }),
      ...(spelling.zero === undefined ? {} : { zero: spelling.zero }),
    },
  });
  return encodeSamples([sample], { agent: { reward: spelling.agentReward } }, { fields: WIRE_FIELDS_V2 });
}

const decode = (bytes: Uint8Array): SamplesReply => decodeSamplesReply(bytes, new Sample(), { fields: WIRE_FIELDS_V2 });
const metaText = (bytes: Uint8Array): string => new TextDecoder().decode(readSafetensors(bytes).tensors.get("_samples_meta")!.data);

describe("Python number kinds in a samples reply", () => {
  const floats = payload(FLOATS);
  const ints = payload(INTS);

  test("the two replies differ only in the spelling of the three values", () => {
    expect(metaText(floats)).toContain('"reward":1.0');
    expect(metaText(floats)).toContain('"score":2.0');
    expect(metaText(floats)).toContain('"session_metadata":{"agent":{"reward":1.0}}');
    expect(metaText(floats).replace(/1\.0/g, "1").replace(/2\.0/g, "2")).toBe(metaText(ints));
  });

  test("decoding keeps the kind: 1.0 is a float, 1 an int", () => {
    const a = decode(floats);
    const b = decode(ints);
    expect(a.samples[0].reward).toBeInstanceOf(PyFloat);
    expect(a.samples[0].metadata.score).toBeInstanceOf(PyFloat);
    expect((a.session_metadata.agent as Record<string, unknown>).reward).toBeInstanceOf(PyFloat);
    expect(b.samples[0].reward).toBe(1);
    expect(b.samples[0].metadata.score).toBe(2);
    // the per-token arrays keep their plain number form
    expect(a.samples[0].rollout_log_probs).toEqual([-0.5]);
    expect(a.samples[0].tokens).toEqual([11, 12, 13]);
  });

  test("toBeBitwiseEqual tells them apart, naming kind and bits, and each equals itself", () => {
    const a = decode(floats).samples[0];
    const b = decode(ints).samples[0];
    const message = thrownMessage(() => expect(a).toBeBitwiseEqual(b));
    expect(message).toContain("sample.reward: float 1.0 (0x3ff0000000000000) vs int 1");
    expect(message).toContain("sample.metadata.score: float 2.0 (0x4000000000000000) vs int 2");
    expect(a).toBeBitwiseEqual(decode(floats).samples[0]);
    expect(b).toBeBitwiseEqual(decode(ints).samples[0]);
    expect(a).not.toBeBitwiseEqual(b);
  });

  test("session_metadata.agent.reward 1.0 vs 1 differs under the comparator and expect.bitwiseEqualTo", () => {
    const a = decode(floats).session_metadata;
    const b = decode(ints).session_metadata;
    expect(formatDifferences(compareBitwise(a, b, { rootPath: "session_metadata" }))).toBe(
      "session_metadata.agent.reward: float 1.0 (0x3ff0000000000000) vs int 1",
    );
    expect(thrownMessage(() => expect({ meta: a }).toEqual({ meta: expect.bitwiseEqualTo(b) }))).toContain(
      "value.agent.reward: float 1.0 (0x3ff0000000000000) vs int 1",
    );
    expect({ meta: a }).toEqual({ meta: expect.bitwiseEqualTo(decode(floats).session_metadata) });
    expect({ meta: b }).toEqual({ meta: expect.bitwiseEqualTo(decode(ints).session_metadata) });
    expect({ meta: a }).toEqual({ meta: expect.not.bitwiseEqualTo(b) });
  });

  test("a golden's plain integral number is an int; pyFloat writes Python's float", () => {
    const a = decode(floats).samples[0];
    const b = decode(ints).samples[0];
    const golden = (reward: JsonValue, score: JsonValue): Sample => Object.assign(decode(ints).samples[0], { reward, metadata: { score } });
    expect(b).toBeBitwiseEqual(golden(1, 2));
    expect(a).toBeBitwiseEqual(golden(pyFloat(1), pyFloat(2)));
    expect(thrownMessage(() => expect(a).toBeBitwiseEqual(golden(1, 2)))).toContain("sample.reward: float 1.0 (0x3ff0000000000000) vs int 1");
    // a non-integral plain number is a float already: pyFloat(0.5) and 0.5 are the same Python value
    expect({ r: pyFloat(0.5) }).toBeBitwiseEqual({ r: 0.5 });
    expect({ r: pyInt(7) }).toBeBitwiseEqual({ r: 7 });
  });

  test("integers past 2^53 decode exactly and compare exactly", () => {
    const a = decode(payload({ ...INTS, big: pyInt("9007199254740993") }));
    const b = decode(payload({ ...INTS, big: pyInt("9007199254740992") }));
    expect(metaText(payload({ ...INTS, big: pyInt("9007199254740993") }))).toContain('"big":9007199254740993');
    const big = a.samples[0].metadata.big;
    expect(big).toBeInstanceOf(PyBigInt);
    expect((big as PyBigInt).value).toBe(9007199254740993n);
    expect(thrownMessage(() => expect(a.samples[0]).toBeBitwiseEqual(b.samples[0]))).toContain(
      "sample.metadata.big: int 9007199254740993 vs int 9007199254740992",
    );
    expect(a.samples[0]).toBeBitwiseEqual(decode(payload({ ...INTS, big: pyInt(2n ** 53n + 1n) })).samples[0]);
    // a JS number past 2^53 has already been rounded: pyInt refuses it
    expect(() => pyInt(2 ** 53 + 2)).toThrow("pyInt: 9007199254740994 is not a safe integer");
  });

  test("0.0, -0.0 and 0 are three different leaves", () => {
    const zero = (value: JsonValue): Sample => decode(payload({ ...INTS, zero: value })).samples[0];
    expect(metaText(payload({ ...INTS, zero: pyFloat(0) }))).toContain('"zero":0.0');
    expect(metaText(payload({ ...INTS, zero: -0 }))).toContain('"zero":-0.0');
    expect(zero(pyFloat(0)).metadata.zero).toBeInstanceOf(PyFloat);
    expect(Object.is(zero(-0).metadata.zero, -0)).toBe(true);
    expect(thrownMessage(() => expect(zero(pyFloat(0))).toBeBitwiseEqual(zero(-0)))).toContain(
      "sample.metadata.zero: float 0.0 (0x0000000000000000) vs float -0.0 (0x8000000000000000)",
    );
    expect(thrownMessage(() => expect(zero(pyFloat(0))).toBeBitwiseEqual(zero(0)))).toContain("sample.metadata.zero: float 0.0 (0x0000000000000000) vs int 0");
    expect(zero(-0)).not.toBeBitwiseEqual(zero(0));
    expect(zero(-0)).toBeBitwiseEqual(zero(-0));
  });

  test("the wire writer spells kinded values as Python does", () => {
    const text = metaText(payload({ ...INTS, reward: pyFloat(1e16), big: pyFloat(-3), zero: pyInt("-123456789012345678901234567890") }));
    expect(text).toContain('"reward":1e+16');
    expect(text).toContain('"big":-3.0');
    expect(text).toContain('"zero":-123456789012345678901234567890');
  });

  test("Sample.fromDict on JSON text keeps the kinds and the per-token arrays plain", () => {
    const sample = Sample.fromDict('{"reward": 1.0, "tokens": [1, 2], "rollout_log_probs": [0.0, -0.5], "metadata": {"score": 2, "n": 18446744073709551616}}');
    expect(sample.reward).toBeInstanceOf(PyFloat);
    expect(sample.rollout_log_probs).toEqual([0, -0.5]);
    expect((sample.metadata.n as PyBigInt).value).toBe(2n ** 64n);
    expect(sample).toBeBitwiseEqual(
      new Sample({ reward: pyFloat(1), tokens: [1, 2], rollout_log_probs: [0, -0.5], metadata: { score: 2, n: pyInt(2n ** 64n) } }),
    );
    expect(sample).not.toBeBitwiseEqual(new Sample({ reward: 1, tokens: [1, 2], rollout_log_probs: [0, -0.5], metadata: { score: 2, n: pyInt(2n ** 64n) } }));
    expect(() => Sample.fromDict('{"reward": 1.0,}')).toThrow("Sample.fromDict: the JSON text is not JSON Python reads (Expecting property name");
  });

  test("bitwise snapshots write the kind and read it back", () => {
    const a = decode(floats).samples[0];
    const b = decode(ints).samples[0];
    const big = decode(payload({ ...INTS, big: pyInt("9007199254740993") })).samples[0];
    const text = serializeBitTree(a).text;
    expect(text).toContain("  reward: float 0x3ff0000000000000 (1.0)");
    expect(text).toContain('    "score": float 0x4000000000000000 (2.0)');
    expect(serializeBitTree(b).text).toContain("  reward: 0x3ff0000000000000 (1)");
    expect(serializeBitTree(big).text).toContain('    "big": int 9007199254740993');
    expect(compareBitwise(a, parseBitTree(text))).toEqual([]);
    expect(compareBitwise(big, parseBitTree(serializeBitTree(big).text))).toEqual([]);
    expect(formatDifferences(compareBitwise(b, parseBitTree(text)))).toBe(
      ["sample.reward: int 1 vs float 1.0 (0x3ff0000000000000)", "sample.metadata.score: int 2 vs float 2.0 (0x4000000000000000)"].join("\n"),
    );
    expect(a).toMatchBitwiseSnapshot();
  });

  test("the parity matcher and the HTML report show the kind", () => {
    const verdict = checkTrainingPayloadParity(run("v1", decode(ints)), run("v2", decode(floats)), NO_SCENARIO);
    const payloadPart = verdict.failures.find((failure) => failure.part === "training sample");
    expect(formatDifferences(payloadPart?.differences ?? [])).toBe(
      ["sample.reward: int 1 vs float 1.0 (0x3ff0000000000000)", "sample.metadata.score: int 2 vs float 2.0 (0x4000000000000000)"].join("\n"),
    );
    expect(checkTrainingPayloadParity(run("v1", decode(floats)), run("v2", decode(floats)), NO_SCENARIO).pass).toBe(true);
    expect(checkTrainingPayloadParity(run("v1", decode(ints)), run("v2", decode(ints)), NO_SCENARIO).pass).toBe(true);
    expect(thrownMessage(() => expect(run("v1", decode(ints))).toHaveTrainingPayloadParity(run("v2", decode(floats)), NO_SCENARIO))).toContain(
      "sample.reward: int 1 vs float 1.0 (0x3ff0000000000000)",
    );
    // toMatchAgentMetadata: v2's sessionMetadata.agent (and each sample's metadata) against a golden
    const agentRun = (reply: SamplesReply): SessionParityRun => {
      const agent = reply.session_metadata.agent as Record<string, JsonValue>;
      reply.samples.forEach((sample) => (sample.metadata = { ...sample.metadata, reward: agent.reward }));
      return run("v2", reply);
    };
    expect(agentRun(decode(floats))).toMatchAgentMetadata({ reward: pyFloat(1) });
    expect(agentRun(decode(ints))).toMatchAgentMetadata({ reward: 1 });
    expect(thrownMessage(() => expect(agentRun(decode(floats))).toMatchAgentMetadata({ reward: 1 }))).toContain(
      "sessionMetadata.agent.reward: float 1.0 (0x3ff0000000000000) vs int 1",
    );
    const html = renderHtmlReport({
      title: "kinds",
      generatedAt: "2026-01-01T00:00:00Z",
      summary: [],
      pairs: [pairView({ title: "pair", v1: null, v2: null, verdicts: [verdict] })],
    });
    expect(html).toContain("sample.reward: int 1 vs float 1.0 (0x3ff0000000000000)");
  });

  const python = pythonMissing();
  (python === null ? test : test.skip)("Python's json module reads the same kinds and the same (in)equalities", () => {
    const bytes = [floats, ints, payload({ ...INTS, big: pyInt("9007199254740993"), zero: -0 })];
    const reference = JSON.parse(runPythonScript("bit_tree.py", JSON.stringify(bytes.map((b) => Buffer.from(b).toString("hex"))))) as {
      leaves: [string, string, string][][];
      equal: boolean[][];
    };
    const decoded = bytes.map(decode);
    // Each Python leaf has the kind and value our decoded value carries.
    const ours = (reply: SamplesReply, path: string): unknown => {
      const at = path.replace(/^meta\.samples\[0\]\./, "sample.").replace(/^meta\.session_metadata\./, "session.");
      const [root, ...keys] = at.split(".");
      let value: unknown = root === "sample" ? reply.samples[0] : reply.session_metadata;
      for (const key of keys) value = (value as Record<string, unknown>)[key];
      return value;
    };
    for (const [index, leaves] of reference.leaves.entries()) {
      for (const [path, kind, value] of leaves) {
        if (!/^meta\.(samples\[0\]\.(reward|metadata\.\w+)|session_metadata\.agent\.reward)$/.test(path)) continue;
        const mine = ours(decoded[index], path);
        if (kind === "float64") {
          expect([path, mine instanceof PyFloat || (typeof mine === "number" && !Number.isInteger(mine)) || Object.is(mine, -0)]).toEqual([path, true]);
          expect([path, float64Hex(mine instanceof PyFloat ? mine.value : (mine as number))]).toEqual([path, value]);
        } else {
          expect([path, kind]).toEqual([path, "int"]);
          expect([path, mine instanceof PyBigInt ? mine.value.toString() : String(mine)]).toEqual([path, value]);
        }
      }
    }
    const ourEqual = decoded.map((a) =>
      decoded.map((b) => compareBitwise(a.samples[0], b.samples[0]).length === 0 && compareBitwise(a.session_metadata, b.session_metadata).length === 0),
    );
    expect(ourEqual).toEqual(reference.equal);
  });
});

/** Checks that need the weather scenario are off: these runs only carry the decoded samples. */
const NO_SCENARIO = { recordCount: null, toolCalls: null, topology: null, agentMetadata: null } as const;

function run(version: "v1" | "v2", reply: SamplesReply): SessionParityRun {
  return {
    version,
    samples: reply.samples,
    sessionMetadata: version === "v1" ? {} : { agent: reply.session_metadata.agent },
    failure: undefined,
    emptyReason: null,
    preCollect: { session_id: "0".repeat(32), records: [], metadata: {} },
  };
}

describe("the fixture's GET /sessions/{id} view", () => {
  let server: Server;
  let url: string;
  beforeAll(async () => {
    // A session server's view as bytes, with a float request parameter, an integral float in metadata and a big int.
    const body = '{"session_id":"s","records":[{"request":{"temperature":1.0,"seed":12345678901234567890}}],"metadata":{"score":2.0,"n":3}}';
    server = createServer((_req, res) => res.writeHead(200, { "content-type": "application/json" }).end(body));
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await new Promise<void>((resolve, reject) => server.close((error) => (error ? reject(error) : resolve())));
  });

  test("is read as Python's json.loads reads it", async () => {
    const view = await new SessionClient(url).snapshot("s");
    const request = view.records[0].request;
    expect(request.temperature).toBeInstanceOf(PyFloat);
    expect((request.seed as PyBigInt).value).toBe(12345678901234567890n);
    expect(view.metadata).toBeBitwiseEqual({ score: pyFloat(2), n: 3 });
    expect(view.metadata).not.toBeBitwiseEqual({ score: 2, n: 3 });
  });
});
