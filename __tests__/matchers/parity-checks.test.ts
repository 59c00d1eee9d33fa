// The scenario checks and matchers on real weather runs (a private latency-free environment, not the global one),
// edited copy by copy to show each failure names its part and prints its differences.
import {
  buildWeatherInputSamples,
  checkAgentMetadata,
  checkRetryTopology,
  checkToolCallRoundTrips,
  checkTrainingPayloadParity,
  runAgenticRetryTrajectories,
  startParityEnvironment,
  WEATHER_AGENT_METADATA,
  WEATHER_RETRY_TOPOLOGY,
  WEATHER_TOOL_ROUND_TRIPS,
  type JsonObject,
  type ParityEnvironment,
  type SessionParityRun,
} from "../../src";
import { sessionParityMatchers } from "../../src/entries/registry";
import { drawRetryTree } from "../../src/matchers";
import { deepCopySample } from "../../src/wire/sample-copy";
import { thrownMessage } from "./helpers";

function copyRun(run: SessionParityRun): SessionParityRun {
  return {
    ...run,
    samples: run.samples.map(deepCopySample),
    preCollect: JSON.parse(JSON.stringify(run.preCollect)) as SessionParityRun["preCollect"],
    sessionMetadata: JSON.parse(JSON.stringify(run.sessionMetadata)) as JsonObject,
  };
}

type Row = Record<string, unknown>;
const records = (run: SessionParityRun): Row[] => run.preCollect.records as unknown as Row[];
const toolCall = (record: Row): Row => ((((record.response as Row).choices as Row[])[0].message as Row).tool_calls as Row[])[0];
const lastMessage = (record: Row): Row => ((record.request as Row).messages as Row[]).slice(-1)[0];
const treeOf = (run: SessionParityRun) => run.preCollect.metadata.tree as { nodes: Row[]; leaves: Row[] };

let environment: ParityEnvironment;
let v1: SessionParityRun[];
let v2: SessionParityRun[];

beforeAll(async () => {
  environment = await startParityEnvironment({ env: {}, latencyMs: 0, logger: { warn: () => {} } });
  v1 = await runAgenticRetryTrajectories({ version: "v1", inputSamples: buildWeatherInputSamples(2), sessionServerUrls: [environment.v1Url] });
  v2 = await runAgenticRetryTrajectories({ version: "v2", inputSamples: buildWeatherInputSamples(2), sessionServerUrls: [environment.v2Url] });
});
afterAll(async () => {
  await environment?.stop();
});

test("the registry carries the scenario, fuzz, well-formedness and snapshot matchers next to toBeBitwiseEqual", () => {
  expect(Object.keys(sessionParityMatchers).sort()).toEqual([
    "toBeBitwiseEqual",
    "toBeWellFormedTrainingSample",
    "toHaveAgenticParity",
    "toHaveRetryTopology",
    "toHaveTrainingPayloadParity",
    "toMatchAgentMetadata",
    "toMatchBitwiseSnapshot",
    "toPassSessionVerifyGate",
    "toRoundTripToolCalls",
  ]);
});

describe("retry topology", () => {
  test("the weather tree draws as an indented ASCII tree with leaves and the kept leaf tagged", () => {
    const nodes = WEATHER_RETRY_TOPOLOGY.nodes.map(([id, parent]) => ({ id, parent }));
    const leaves = WEATHER_RETRY_TOPOLOGY.leaves.map(([id, path]) => ({ node_id: id, path_node_ids: path }));
    expect(drawRetryTree(nodes, leaves, [8])).toBe(
      [
        "0",
        "`-- 1",
        "    `-- 2",
        "        `-- 3",
        "            |-- 4 [leaf]",
        "            |-- 5 [leaf]",
        "            `-- 6",
        "                `-- 7",
        "                    `-- 8 [leaf, kept]",
        "leaves: 4 [0, 1, 2, 3, 4], 5 [0, 1, 2, 3, 5], 8 [0, 1, 2, 3, 6, 7, 8]",
      ].join("\n"),
    );
    expect(
      drawRetryTree(
        [
          { id: 0, parent: 1 },
          { id: 1, parent: 0 },
          { id: 2, parent: 9 },
        ],
        [],
      ),
    ).toBe(["2 [parent 9 not in the tree]", "(not reachable from a root: (0, parent 1), (1, parent 0))", "leaves: none"].join("\n"));
  });

  test("a v2 run passes; its bare tree passes without selectedLeaf and fails with it, saying why", () => {
    expect(checkRetryTopology(v2[0], WEATHER_RETRY_TOPOLOGY)).toMatchObject({ pass: true, failures: [], firstDifference: null });
    const tree = treeOf(v2[0]);
    expect(tree).toHaveRetryTopology({ nodes: WEATHER_RETRY_TOPOLOGY.nodes, leaves: WEATHER_RETRY_TOPOLOGY.leaves });
    expect(thrownMessage(() => expect(tree).toHaveRetryTopology(WEATHER_RETRY_TOPOLOGY))).toContain(
      "[selected leaf] expected leaf 8 to be the one kept, but a bare tree says nothing about kept samples: pass the v2 run instead",
    );
  });

  test("a v1 run has no tree to check", () => {
    const verdict = checkRetryTopology(v1[0], WEATHER_RETRY_TOPOLOGY);
    expect(verdict.failures).toEqual([
      { part: "tree", message: "received is a v1 run without metadata.tree (only v2 servers keep a tree)", differences: [], totalDifferences: 0 },
    ]);
    expect(verdict.receivedTree).toBeNull();
  });

  test("a changed leaf path is reported as the first differing leaf", () => {
    const run = copyRun(v2[1]);
    (treeOf(run).leaves[2].path_node_ids as number[]).splice(4, 1);
    const message = thrownMessage(() => expect(run).toHaveRetryTopology(WEATHER_RETRY_TOPOLOGY));
    expect(message).toContain(
      "First difference: first differing leaf: tree.leaves[2] is (8, path [0, 1, 2, 3, 7, 8]), expected (8, path [0, 1, 2, 3, 6, 7, 8])",
    );
    expect(message).toContain("tree.leaves[2].path_node_ids: length 6 vs 7");
    expect(message).toContain("leaves: 4 [0, 1, 2, 3, 4], 5 [0, 1, 2, 3, 5], 8 [0, 1, 2, 3, 7, 8]");
  });

  test("a missing node, and a kept leaf whose descriptor names another response", () => {
    const run = copyRun(v2[0]);
    treeOf(run).nodes.pop();
    (run.samples[0].metadata.leaf as Row).response_id = "chatcmpl-00000000";
    const verdict = checkRetryTopology(run, WEATHER_RETRY_TOPOLOGY);
    expect(verdict.firstDifference).toBe("first differing node: tree.nodes[8] is absent, expected (8, parent 7)");
    expect(verdict.failures.map((failure) => failure.part)).toEqual(["tree.nodes", "selected leaf"]);
    expect(verdict.failures[1].message).toBe("samples[0].metadata.leaf does not describe leaf 8 of the tree (parent, path or response_id)");
    expect(verdict.failures[1].differences[0]).toMatchObject({
      path: "samples[0].metadata.leaf.response_id",
      left: "chatcmpl-00000000",
      right: "<no tree node with that id>",
    });
  });

  test("a malformed expectation is a usage error", () => {
    expect(() => checkRetryTopology(v2[0], { nodes: [[0, null]], leaves: [[0, [0]]], selectedLeaf: 3 })).toThrow(
      "expected.selectedLeaf 3 is not one of the expected leaves",
    );
    expect(() => checkRetryTopology(v2[0], { nodes: [[0]] as never, leaves: [] })).toThrow("expected.nodes[0] must be [id, parent]");
  });
});

describe("agent metadata", () => {
  test("both versions carry it; .not fails with the checked parts listed", () => {
    expect(checkAgentMetadata(v2[0], WEATHER_AGENT_METADATA).checkedParts).toEqual(["sessionMetadata.agent", "samples[0].metadata"]);
    expect(checkAgentMetadata(v1[0], WEATHER_AGENT_METADATA).checkedParts).toEqual(["samples[0].metadata"]);
    expect(thrownMessage(() => expect(v1[1]).not.toMatchAgentMetadata(WEATHER_AGENT_METADATA))).toContain(
      "Checked: samples[0].metadata; every part passed, so .not fails.",
    );
  });

  test("a differing counter on the server side and a missing key on the sample are named with the sample", () => {
    const run = copyRun(v2[1]);
    (run.sessionMetadata.agent as JsonObject).rollback_count = 3;
    delete run.samples[0].metadata.user_count;
    const message = thrownMessage(() => expect(run).toMatchAgentMetadata(WEATHER_AGENT_METADATA));
    expect(message).toContain(
      "[sessionMetadata.agent] v2 sessionMetadata.agent differs from the expected agent metadata\n    sessionMetadata.agent.rollback_count: 3 vs 2\n    1 difference in total",
    );
    expect(message).toContain(
      '[samples[0].metadata] sample 0 (rollout_id 1) of the v2 run: metadata key "user_count" differs from the expected agent metadata\n    samples[0].metadata.user_count: missing on the left',
    );
  });

  test("a -0 counter is not 0", () => {
    const run = copyRun(v1[0]);
    run.samples[0].metadata.system_count = -0;
    expect(run).toMatchAgentMetadata({ ...WEATHER_AGENT_METADATA, system_count: -0 });
    expect(thrownMessage(() => expect(run).toMatchAgentMetadata({ system_count: 0 }))).toContain("samples[0].metadata.system_count: -0 vs +0");
  });

  test("something that is not a run", () => {
    expect(thrownMessage(() => expect(v1[0].samples[0]).toMatchAgentMetadata(WEATHER_AGENT_METADATA))).toContain(
      "toMatchAgentMetadata: received is not a SessionParityRun: it lacks",
    );
    expect(checkAgentMetadata(v1[0].samples[0], WEATHER_AGENT_METADATA).failures).toEqual([
      { part: "run", message: expect.stringContaining("received is not a SessionParityRun"), differences: [], totalDifferences: 0, usage: true },
    ]);
  });
});

describe("tool-call round trips", () => {
  test("runs and bare snapshots of both versions show the two get_weather round trips", () => {
    for (const run of [...v1, ...v2]) {
      expect(run).toRoundTripToolCalls(WEATHER_TOOL_ROUND_TRIPS);
      expect(run.preCollect).toRoundTripToolCalls(WEATHER_TOOL_ROUND_TRIPS);
    }
  });

  test("other arguments, an unanswered call id and an extra advertised tool are each named", () => {
    const run = copyRun(v1[0]);
    const [first, second, third, fourth] = records(run);
    (toolCall(third).function as Row).arguments = '{"location": "Paris"}';
    lastMessage(second).tool_call_id = "call_other";
    ((first.request as Row).tools as Row[]).push({ type: "function", function: { name: "get_time" } });
    void fourth;
    const verdict = checkToolCallRoundTrips(run, WEATHER_TOOL_ROUND_TRIPS);
    expect(verdict.failures.map((failure) => failure.part)).toEqual([
      "records[0].request.tools",
      "round trip 0 (get_weather: record 0 -> record 1)",
      "round trip 1 (get_weather: record 2 -> record 3)",
    ]);
    const message = thrownMessage(() => expect(run).toRoundTripToolCalls(WEATHER_TOOL_ROUND_TRIPS));
    expect(message).toContain("[records[0].request.tools] record 0 advertised the tools [get_weather, get_time], expected exactly [get_weather]");
    expect(message).toMatch(/record 1's tool message answers "call_other", expected the call id "[^"]+" of record 0/);
    expect(message).toContain('records[2].response.choices[0].message.tool_calls[0].function.arguments.location: "Paris" vs "Shanghai"');
  });

  test("two calls in one record, unparsable arguments, and a record that does not exist", () => {
    const run = copyRun(v2[0]);
    const [first, , third] = records(run);
    const calls = (((first.response as Row).choices as Row[])[0].message as Row).tool_calls as Row[];
    calls.push(calls[0]);
    (toolCall(third).function as Row).arguments = "{location: Shanghai}";
    const message = thrownMessage(() =>
      expect(run).toRoundTripToolCalls([...WEATHER_TOOL_ROUND_TRIPS, { call: 7, result: 8, name: "get_weather", arguments: {} }]),
    );
    expect(message).toContain("record 0's response holds 2 tool calls, expected exactly one call to get_weather");
    expect(message).toMatch(/record 2's get_weather arguments are not valid JSON \(.+\): "\{location: Shanghai\}"/);
    expect(message).toContain("record 7 does not exist (the session has 7 records)");
  });
});

describe("training-payload parity", () => {
  test("a real pair passes; .not lists every checked part", () => {
    const verdict = checkTrainingPayloadParity(v1[0], v2[0]);
    expect(verdict.pass).toBe(true);
    expect(verdict.checkedParts).toEqual([
      "versions",
      "server problem",
      "empty reason",
      "sample count",
      "record count",
      "v1 tool round trip",
      "v2 tool round trip",
      "v2 retry topology",
      "v1 agent metadata",
      "v2 agent metadata",
      "v1 well-formed sample",
      "v2 well-formed sample",
      "max_trim_tokens",
      "session metadata",
      "training sample",
    ]);
    expect(thrownMessage(() => expect(v1[1]).not.toHaveTrainingPayloadParity(v2[1]))).toContain("The v1 and v2 runs carry the same training payload.");
  });

  test("swapped versions, a session-metadata bit and a max_trim_tokens mismatch each name their part", () => {
    expect(checkTrainingPayloadParity(v2[0], v1[0]).failures[0]).toMatchObject({
      part: "versions",
      message: "expected a v1 run compared with a v2 run, got v2 (received) and v1 (expected)",
    });
    const left = copyRun(v1[0]);
    const ids = left.sessionMetadata.accumulated_token_ids as number[];
    ids[3] += 1;
    left.samples[0].metadata.max_trim_tokens = 1;
    const verdict = checkTrainingPayloadParity(left, v2[0]);
    expect(verdict.failures.map((failure) => failure.part)).toEqual(["max_trim_tokens", "session metadata"]);
    const message = thrownMessage(() => expect(left).toHaveTrainingPayloadParity(v2[0]));
    expect(message).toContain(
      "[max_trim_tokens] v1 samples[0].metadata.max_trim_tokens (left) differs from v2 sessionMetadata.max_trim_tokens (right)\n    max_trim_tokens: 1 vs 0",
    );
    expect(message).toMatch(
      /\[session metadata\] v1 session metadata \(left\) is not bitwise equal to v2's without agent and tree \(right\)\n {4}sessionMetadata\.accumulated_token_ids\[3\]: 0x[0-9a-f]{16} \(\d+\) vs 0x[0-9a-f]{16} \(\d+\)/,
    );
  });

  test("two sides carrying the same broken sample agree bitwise but fail the named well-formed parts", () => {
    const left = copyRun(v1[0]);
    const right = copyRun(v2[0]);
    for (const run of [left, right]) {
      run.samples[0].tokens[0] = -5;
      run.samples[0].loss_mask![0] = 2;
    }
    const verdict = checkTrainingPayloadParity(left, right);
    expect(verdict.failures.map((failure) => failure.part)).toEqual([
      "v1 well-formed sample: tokens",
      "v1 well-formed sample: loss_mask",
      "v2 well-formed sample: tokens",
      "v2 well-formed sample: loss_mask",
    ]);
    expect(verdict.failures[0].message).toBe("tokens[0] = -5 is not a non-negative integer");
    expect(verdict.failures[1].message).toBe("loss_mask[0] = 2 is not 0 or 1");
    expect(thrownMessage(() => expect(left).toHaveTrainingPayloadParity(right))).toContain("[v2 well-formed sample: loss_mask] loss_mask[0] = 2 is not 0 or 1");
  });

  test("an empty reply, and scenario parts switched off with null", () => {
    const empty = copyRun(v2[0]);
    empty.emptyReason = "no_records";
    expect(checkTrainingPayloadParity(v1[0], empty).failures[0]).toMatchObject({ part: "empty reason", message: "the v2 reply was empty (no_records)" });
    const short = copyRun(v2[0]);
    short.preCollect.records.pop();
    expect(checkTrainingPayloadParity(v1[0], short).failures.map((failure) => failure.part)).toEqual(["record count"]);
    expect(checkTrainingPayloadParity(v1[0], short, { recordCount: null }).pass).toBe(true);
    expect(checkTrainingPayloadParity(v1[0], v2[0], { toolCalls: null, topology: null, agentMetadata: null }).checkedParts).not.toContain("v2 retry topology");
  });

  test("a run that failed on a server problem gives only its cause, and .not does not pass on it", () => {
    const broken = copyRun(v2[0]);
    broken.failure = "agent failed for session s on http://127.0.0.1:1: weather agent: initial chat call failed (status 502): upstream down";
    broken.preCollect.records.length = 0;
    const verdict = checkTrainingPayloadParity(v1[0], broken);
    expect(verdict.failures).toEqual([
      {
        part: "server problem",
        message: `the v2 run failed on a server problem, so the payloads were never compared: ${broken.failure}`,
        differences: [],
        totalDifferences: 0,
        serverProblem: true,
      },
    ]);
    expect(thrownMessage(() => expect(v1[0]).toHaveTrainingPayloadParity(broken))).toContain("(status 502): upstream down");
    expect(thrownMessage(() => expect(v1[0]).toHaveTrainingPayloadParity(broken))).not.toContain("record count");
    expect(thrownMessage(() => expect(v1[0]).not.toHaveTrainingPayloadParity(broken))).toContain(
      "toHaveTrainingPayloadParity: the v2 run failed on a server problem",
    );
  });

  test("arguments that are not runs", () => {
    expect(thrownMessage(() => expect(v1[0]).toHaveTrainingPayloadParity(v2[0].samples[0] as never))).toContain(
      "toHaveTrainingPayloadParity: the v2 run (expected) is not a SessionParityRun: it lacks",
    );
    expect(checkTrainingPayloadParity(undefined, v2[0]).failures).toEqual([
      { part: "runs", message: "the v1 run (received) is not a SessionParityRun (got undefined)", differences: [], totalDifferences: 0, usage: true },
    ]);
  });
});

describe("usage errors are never a silent pass under .not", () => {
  test.each([
    [
      "toHaveTrainingPayloadParity",
      () => expect(undefined).not.toHaveTrainingPayloadParity(v2[0]),
      "toHaveTrainingPayloadParity: the v1 run (received) is not a SessionParityRun (got undefined)",
    ],
    [
      "toHaveTrainingPayloadParity (expected)",
      () => expect(v1[0]).not.toHaveTrainingPayloadParity([v2[0]] as never),
      "toHaveTrainingPayloadParity: the v2 run (expected) is not a SessionParityRun (got an array of 1)",
    ],
    [
      "toHaveRetryTopology",
      () => expect(v2[0].samples[0]).not.toHaveRetryTopology(WEATHER_RETRY_TOPOLOGY),
      "toHaveRetryTopology: received is neither a v2 SessionParityRun, a tree {nodes, leaves} nor a tuple tree {nodes: [id, parent][], leaves: [nodeId, path][]} (got a Sample)",
    ],
    [
      "toMatchAgentMetadata",
      () => expect(null).not.toMatchAgentMetadata(WEATHER_AGENT_METADATA),
      "toMatchAgentMetadata: received is not a SessionParityRun (got null)",
    ],
    [
      "toRoundTripToolCalls",
      () => expect("records").not.toRoundTripToolCalls(WEATHER_TOOL_ROUND_TRIPS),
      "toRoundTripToolCalls: received is neither a SessionParityRun nor a GET /sessions/{id} snapshot with records (got string)",
    ],
  ])("%s throws a TypeError naming the bad value", (_name, assertion, message) => {
    expect(assertion).toThrow(TypeError);
    expect(assertion).toThrow(message);
  });

  test("a v1 run without a tree is a real topology failure, so .not passes and the plain matcher fails with the reason", () => {
    expect(v1[0]).not.toHaveRetryTopology(WEATHER_RETRY_TOPOLOGY);
    expect(thrownMessage(() => expect(v1[0]).toHaveRetryTopology(WEATHER_RETRY_TOPOLOGY))).toContain(
      "[tree] received is a v1 run without metadata.tree (only v2 servers keep a tree)",
    );
  });

  test(".not on the topology and round-trip matchers of a passing run fails listing the checked parts", () => {
    expect(thrownMessage(() => expect(v2[0]).not.toHaveRetryTopology(WEATHER_RETRY_TOPOLOGY))).toContain(
      "The retry tree has the expected topology.\nChecked: tree.nodes, tree.leaves, selected leaf; every part passed, so .not fails.",
    );
    expect(thrownMessage(() => expect(v1[0]).not.toRoundTripToolCalls(WEATHER_TOOL_ROUND_TRIPS))).toMatch(
      /The session's records show the expected tool-call round trips\.\nChecked: records\[0\]\.request\.tools, .*round trip 1 \(get_weather: record 2 -> record 3\); every part passed, so \.not fails\./,
    );
  });
});

describe("toMatchAgentMetadata({ subset })", () => {
  test("by default v2's agent metadata must equal the expectation; subset: true accepts extra keys", () => {
    const run = copyRun(v2[0]);
    run.sessionMetadata.agent = { ...(run.sessionMetadata.agent as JsonObject), trainer_note: "extra" };
    const message = thrownMessage(() => expect(run).toMatchAgentMetadata(WEATHER_AGENT_METADATA));
    expect(message).toContain("[sessionMetadata.agent] v2 sessionMetadata.agent differs from the expected agent metadata");
    expect(message).toContain("sessionMetadata.agent.trainer_note: missing on the right");
    expect(run).toMatchAgentMetadata(WEATHER_AGENT_METADATA, { subset: true });
    expect(run).toMatchAgentMetadata({ rollback_count: 2 }, { subset: true });
    expect(checkAgentMetadata(run, { rollback_count: 2 }, { subset: true }).pass).toBe(true);
  });

  test("subset: true still fails on a differing or missing expected key", () => {
    const message = thrownMessage(() => expect(v2[0]).toMatchAgentMetadata({ rollback_count: 3, missing_key: 1 }, { subset: true }));
    expect(message).toContain("[sessionMetadata.agent] v2 sessionMetadata.agent lacks or differs in expected keys (subset match)");
    expect(message).toContain("sessionMetadata.agent.rollback_count: 2 vs 3");
    expect(message).toContain("sessionMetadata.agent.missing_key: missing on the left");
  });
});

describe("toHaveRetryTopology on a hand-built tuple tree", () => {
  test("the expected topology's own shape is accepted as the received tree, selectedLeaf included", () => {
    expect(WEATHER_RETRY_TOPOLOGY).toHaveRetryTopology(WEATHER_RETRY_TOPOLOGY);
    const { selectedLeaf: _kept, ...bare } = WEATHER_RETRY_TOPOLOGY;
    expect(bare).toHaveRetryTopology(bare);
  });

  test("a differing tuple tree names the node and the selected leaf", () => {
    const moved = { ...WEATHER_RETRY_TOPOLOGY, nodes: WEATHER_RETRY_TOPOLOGY.nodes.map(([id, parent]) => (id === 6 ? [6, 2] : [id, parent])), selectedLeaf: 5 };
    const verdict = checkRetryTopology(moved, WEATHER_RETRY_TOPOLOGY);
    expect(verdict.failures.map((failure) => failure.part)).toEqual(["tree.nodes", "selected leaf"]);
    expect(verdict.firstDifference).toBe("first differing node: tree.nodes[6] is (6, parent 2), expected (6, parent 3)");
    expect(verdict.failures[1].message).toBe("the tree selects leaf 5, expected leaf 8");
  });
});
