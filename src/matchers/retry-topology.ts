// Judges a v2 retry tree against an expected topology and draws both trees as indented ASCII for the report.
// Pure: reads the run's (or tree's) tables, returns a verdict with the first differing node or leaf.
import { DEFAULT_PART_DIFFERENCES, VerdictBuilder, type ParityVerdict } from "./parity-verdict";
import { isPlainRecord, readTree, type TopologyLeaf, type TopologyNode } from "./run-shapes";
import type { RetryTopology } from "./weather-expectations";

/** A topology verdict, with both trees drawn for the report. */
export interface TopologyVerdict extends ParityVerdict {
  /** The received tree as indented ASCII, or null when no tree could be read. */
  receivedTree: string | null;
  /** The expected tree as indented ASCII. */
  expectedTree: string;
  /** The first differing node or leaf in words, or null when nodes and leaves agree. */
  firstDifference: string | null;
}

/** Options of {@link checkRetryTopology}. */
export interface RetryTopologyOptions {
  /** Differences kept per failing part (default 10). */
  maxDifferences?: number;
}

/**
 * Checks a v2 run (its `preCollect` tree), a bare `{nodes, leaves}` tree or a hand-built tree in the expected
 * topology's own tuple shape (`{nodes: [id, parent][], leaves: [nodeId, path][], selectedLeaf?}`) against `expected`: the node table as
 * `(id, parent)` in seq order, the leaf table as `(node_id, path_node_ids)`, and, when `expected.selectedLeaf` is
 * set, that the run kept exactly one sample, from that leaf, whose `metadata.leaf` names the leaf's parent, path and
 * `response_id`.
 * @throws TypeError when `expected` is malformed (its selected leaf must be one of its leaves).
 */
export function checkRetryTopology(received: unknown, expected: RetryTopology, options: RetryTopologyOptions = {}): TopologyVerdict {
  checkExpectedTopology(expected);
  const builder = new VerdictBuilder(options.maxDifferences ?? DEFAULT_PART_DIFFERENCES);
  const expectedNodes: TopologyNode[] = expected.nodes.map(([id, parent]) => ({ id, parent }));
  const expectedLeaves: TopologyLeaf[] = expected.leaves.map(([nodeId, path]) => ({ node_id: nodeId, path_node_ids: [...path] }));
  const expectedSelected = expected.selectedLeaf === undefined ? [] : [expected.selectedLeaf];
  const expectedTree = drawRetryTree(expectedNodes, expectedLeaves, expectedSelected);

  const read = readTree(received, "received");
  if ("problem" in read) {
    if (read.usage) builder.usage("tree", read.problem);
    else builder.fail("tree", read.problem);
    return { ...builder.verdict(), receivedTree: null, expectedTree, firstDifference: null };
  }
  const { tree, run } = read;
  const nodes: TopologyNode[] = tree.nodes.map((row) => ({ id: row.id, parent: row.parent }));
  const leaves: TopologyLeaf[] = tree.leaves.map((row) => ({ node_id: row.node_id, path_node_ids: row.path_node_ids }));
  const keptLeaves =
    run === null
      ? read.selectedLeaf !== undefined
        ? [read.selectedLeaf]
        : []
      : run.samples.map((sample) => (isPlainRecord(sample.metadata.leaf) ? sample.metadata.leaf.node_id : null));

  let firstDifference: string | null = compareTables(
    builder,
    "tree.nodes",
    nodes,
    expectedNodes,
    (message) => `node table differs (${nodes.length} received vs ${expectedNodes.length} expected nodes); ${message}`,
    describeNode,
  );
  const leafDiffs = compareTables(
    builder,
    "tree.leaves",
    leaves,
    expectedLeaves,
    (message) => `leaf table differs (${leaves.length} received vs ${expectedLeaves.length} expected leaves); ${message}`,
    describeLeaf,
  );
  firstDifference ??= leafDiffs;

  if (expected.selectedLeaf !== undefined && run === null && read.selectedLeaf !== undefined) {
    // a hand-built tuple tree names its kept leaf itself
    builder.compare(
      "selected leaf",
      `the tree selects leaf ${String(read.selectedLeaf)}, expected leaf ${expected.selectedLeaf}`,
      read.selectedLeaf,
      expected.selectedLeaf,
      {
        rootPath: "selectedLeaf",
        integers: true,
      },
    );
  } else if (expected.selectedLeaf !== undefined) checkSelectedLeaf(builder, expected, run, tree.nodes, keptLeaves);

  return {
    ...builder.verdict(),
    receivedTree: drawRetryTree(nodes, leaves, keptLeaves),
    expectedTree,
    firstDifference,
  };
}

/** Compares two tables as part `part`; returns the first differing row in words, or null when equal. */
function compareTables<Row>(
  builder: VerdictBuilder,
  part: string,
  received: Row[],
  expected: Row[],
  message: (first: string) => string,
  describe: (row: Row | undefined) => string,
): string | null {
  const index = firstDifferingIndex(received, expected, builder, part);
  if (index === null) return null;
  const rowName = part === "tree.nodes" ? "node" : "leaf";
  const first = `first differing ${rowName}: ${part}[${index}] is ${describe(received[index])}, expected ${describe(expected[index])}`;
  builder.compare(part, message(first), received, expected, { rootPath: part, integers: true });
  return first;
}

function firstDifferingIndex<Row>(received: Row[], expected: Row[], builder: VerdictBuilder, part: string): number | null {
  const probe = new VerdictBuilder(1);
  const length = Math.max(received.length, expected.length);
  for (let i = 0; i < length; i++) {
    if (i >= received.length || i >= expected.length) return i;
    if (!probe.compare(part, "", received[i], expected[i])) return i;
  }
  builder.passed(part);
  return null;
}

function checkSelectedLeaf(
  builder: VerdictBuilder,
  expected: RetryTopology,
  run: { samples: { metadata: Record<string, unknown> }[] } | null,
  treeRows: Record<string, unknown>[],
  keptLeaves: unknown[],
): void {
  const selected = expected.selectedLeaf as number;
  const part = "selected leaf";
  if (run === null) {
    builder.fail(part, `expected leaf ${selected} to be the one kept, but a bare tree says nothing about kept samples: pass the v2 run instead`);
    return;
  }
  const kept = `the run kept ${keptLeaves.length} ${keptLeaves.length === 1 ? "sample" : "samples"}, from ${keptLeaves.length === 1 ? "leaf" : "leaves"} [${keptLeaves.map(String).join(", ")}], expected one sample from leaf ${selected}`;
  if (!builder.compare(part, kept, keptLeaves, [selected], { rootPath: "keptLeafIds", integers: true })) return;
  const expectedParent = expected.nodes.find(([id]) => id === selected)?.[1] ?? null;
  const expectedPath = expected.leaves.find(([id]) => id === selected)?.[1] ?? [];
  const row = treeRows.find((node) => node.id === selected);
  const descriptor = run.samples[0].metadata.leaf;
  builder.compare(
    part,
    `samples[0].metadata.leaf does not describe leaf ${selected} of the tree (parent, path or response_id)`,
    descriptor,
    { node_id: selected, parent: expectedParent, path_node_ids: [...expectedPath], response_id: row?.response_id ?? "<no tree node with that id>" },
    { rootPath: "samples[0].metadata.leaf", integers: true },
  );
}

function checkExpectedTopology(expected: RetryTopology): void {
  const where = "toHaveRetryTopology: expected";
  if (!isPlainRecord(expected) || !Array.isArray(expected.nodes) || !Array.isArray(expected.leaves)) {
    throw new TypeError(`${where} must be {nodes: [id, parent][], leaves: [nodeId, pathNodeIds][], selectedLeaf?}`);
  }
  expected.nodes.forEach((node, i) => {
    if (!Array.isArray(node) || node.length !== 2 || !Number.isInteger(node[0]) || !(node[1] === null || Number.isInteger(node[1]))) {
      throw new TypeError(`${where}.nodes[${i}] must be [id, parent] with integer id and integer-or-null parent`);
    }
  });
  expected.leaves.forEach((leaf, i) => {
    if (!Array.isArray(leaf) || leaf.length !== 2 || !Number.isInteger(leaf[0]) || !Array.isArray(leaf[1]) || !leaf[1].every(Number.isInteger)) {
      throw new TypeError(`${where}.leaves[${i}] must be [nodeId, pathNodeIds] with integer ids`);
    }
  });
  if (expected.selectedLeaf !== undefined && !expected.leaves.some(([id]) => id === expected.selectedLeaf)) {
    throw new TypeError(`${where}.selectedLeaf ${String(expected.selectedLeaf)} is not one of the expected leaves`);
  }
}

function describeNode(node: TopologyNode | undefined): string {
  if (node === undefined) return "absent";
  return node.parent === null ? `(${String(node.id)}, root)` : `(${String(node.id)}, parent ${String(node.parent)})`;
}

function describeLeaf(leaf: TopologyLeaf | undefined): string {
  if (leaf === undefined) return "absent";
  return `(${String(leaf.node_id)}, path ${formatPath(leaf.path_node_ids)})`;
}

function formatPath(path: unknown): string {
  return Array.isArray(path) ? `[${path.map(String).join(", ")}]` : String(path);
}

/**
 * Draws a tree from `(id, parent)` rows as indented ASCII, one node per line, children in row order:
 * leaves listed in `leaves` are tagged `[leaf]`, those in `selected` `[leaf, kept]`; a node whose parent is not
 * in the table is drawn as a root tagged with the missing parent; rows no root reaches (a cycle) are listed last.
 * The leaf table follows as `leaves: 4 [0, 1, 2, 3, 4], ...`.
 */
export function drawRetryTree(nodes: readonly TopologyNode[], leaves: readonly TopologyLeaf[], selected: readonly unknown[] = []): string {
  const ids = new Set(nodes.map((node) => node.id));
  const leafIds = new Set(leaves.map((leaf) => leaf.node_id));
  const kept = new Set(selected);
  const children = new Map<unknown, TopologyNode[]>();
  const roots: TopologyNode[] = [];
  for (const node of nodes) {
    if (node.parent === null || !ids.has(node.parent) || node.parent === node.id) roots.push(node);
    else children.set(node.parent, [...(children.get(node.parent) ?? []), node]);
  }
  const lines: string[] = [];
  const drawn = new Set<TopologyNode>();
  const label = (node: TopologyNode): string => {
    const tags: string[] = [];
    if (leafIds.has(node.id)) tags.push(kept.has(node.id) ? "leaf, kept" : "leaf");
    if (node.parent !== null && (!ids.has(node.parent) || node.parent === node.id)) tags.push(`parent ${String(node.parent)} not in the tree`);
    return tags.length === 0 ? String(node.id) : `${String(node.id)} [${tags.join("; ")}]`;
  };
  const draw = (node: TopologyNode, prefix: string, connector: string, childPrefix: string): void => {
    if (drawn.has(node)) return;
    drawn.add(node);
    lines.push(`${prefix}${connector}${label(node)}`);
    const kids = children.get(node.id) ?? [];
    kids.forEach((kid, i) => {
      const last = i === kids.length - 1;
      draw(kid, prefix + childPrefix, last ? "`-- " : "|-- ", last ? "    " : "|   ");
    });
  };
  for (const root of roots) draw(root, "", "", "");
  const unreachable = nodes.filter((node) => !drawn.has(node));
  if (unreachable.length > 0) lines.push(`(not reachable from a root: ${unreachable.map(describeNode).join(", ")})`);
  if (nodes.length === 0) lines.push("(no nodes)");
  lines.push(`leaves: ${leaves.length === 0 ? "none" : leaves.map((leaf) => `${String(leaf.node_id)} ${formatPath(leaf.path_node_ids)}`).join(", ")}`);
  return lines.join("\n");
}
