// Draws a v2 retry tree and a v1 record chain as inline SVG: one column per node in commit order, one row per depth.
// Pure (data -> markup); the kept leaf, superseded leaves and roots carry distinct classes the page styles.
import { escapeHtml } from "./html-escape";
import type { ReportRecordView, ReportRunView } from "./types";

const COLUMN = 112;
const ROW = 64;
const BOX_W = 96;
const BOX_H = 44;
const PAD = 8;

/** How a node is drawn. */
export type TreeNodeRole = "kept-leaf" | "superseded-leaf" | "root" | "inner";

/** The role of every node: kept leaf, superseded (not kept) leaf, root, or inner node. */
export function treeNodeRoles(tree: NonNullable<ReportRunView["tree"]>, keptLeaves: readonly number[]): Map<number, TreeNodeRole> {
  const leafIds = new Set(tree.leaves.map((leaf) => leaf.nodeId));
  const kept = new Set(keptLeaves);
  const roles = new Map<number, TreeNodeRole>();
  for (const node of tree.nodes) {
    if (leafIds.has(node.id)) roles.set(node.id, kept.has(node.id) ? "kept-leaf" : "superseded-leaf");
    else roles.set(node.id, node.parent === null ? "root" : "inner");
  }
  return roles;
}

function box(x: number, y: number, cls: string, lines: string[], title: string): string {
  const text = lines
    .map((line, i) => `<text x="${x + BOX_W / 2}" y="${y + 15 + i * 13}" text-anchor="middle">${escapeHtml(line)}</text>`)
    .join("");
  return `<g class="${cls}"><title>${escapeHtml(title)}</title><rect x="${x}" y="${y}" width="${BOX_W}" height="${BOX_H}" rx="6"/>${text}</g>`;
}

/** The retry tree as SVG (leaves in `failing` marked as the failure's), or a short note when the run has no tree. */
export function drawRetryTree(tree: ReportRunView["tree"], keptLeaves: readonly number[], failing: readonly number[] = []): string {
  if (tree === null || tree.nodes.length === 0) return `<p class="note">no retry tree</p>`;
  const roles = treeNodeRoles(tree, keptLeaves);
  const depth = new Map<number, number>();
  const column = new Map<number, number>();
  tree.nodes.forEach((node, i) => {
    column.set(node.id, i);
    depth.set(node.id, node.parent === null ? 0 : (depth.get(node.parent) ?? 0) + 1);
  });
  const maxDepth = Math.max(...depth.values());
  const width = tree.nodes.length * COLUMN + PAD;
  const height = (maxDepth + 1) * ROW + PAD;
  const at = (id: number): [number, number] => [PAD + (column.get(id) ?? 0) * COLUMN, PAD + (depth.get(id) ?? 0) * ROW];
  const edges = tree.nodes
    .filter((node) => node.parent !== null && column.has(node.parent))
    .map((node) => {
      const [px, py] = at(node.parent as number);
      const [x, y] = at(node.id);
      return `<path class="edge" d="M${px + BOX_W / 2},${py + BOX_H} C${px + BOX_W / 2},${y - 8} ${x + BOX_W / 2},${py + BOX_H + 8} ${x + BOX_W / 2},${y}"/>`;
    })
    .join("");
  const nodes = tree.nodes
    .map((node) => {
      const [x, y] = at(node.id);
      const role = roles.get(node.id) ?? "inner";
      const fails = failing.includes(node.id);
      const version = node.weightVersion === null ? "weight version not on the active path" : `weight version ${node.weightVersion}`;
      const title = `node ${node.id} (${role.replace("-", " ")}${fails ? ", failing" : ""}), parent ${node.parent ?? "none"}, ${node.numTokens} tokens, ${version}, response ${node.responseId}`;
      return box(x, y, `node ${role}${fails ? " failing" : ""}`, [`#${node.id}`, `${node.weightVersion ?? "w –"} · ${node.numTokens} tok`], title);
    })
    .join("");
  return `<svg class="tree" role="img" aria-label="v2 retry tree" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}">${edges}${nodes}</svg>`;
}

/** The v1 record chain as SVG: one box per record of the active path, left to right. */
export function drawRecordChain(records: readonly ReportRecordView[]): string {
  if (records.length === 0) return `<p class="note">no records</p>`;
  const width = records.length * COLUMN + PAD;
  const height = BOX_H + 2 * PAD;
  const parts = records.map((record, i) => {
    const x = PAD + i * COLUMN;
    const arrow = i === 0 ? "" : `<path class="edge" d="M${x - (COLUMN - BOX_W)},${PAD + BOX_H / 2} L${x},${PAD + BOX_H / 2}"/>`;
    const title = `record ${i}: response ${record.responseId ?? "?"}, ${record.promptTokens} prompt + ${record.completionTokens} completion tokens, finish ${record.finishReason ?? "?"}`;
    return arrow + box(x, PAD, "node record", [`record ${i}`, `${record.weightVersion ?? "?"} · ${record.completionTokens} tok`], title);
  });
  return `<svg class="chain" role="img" aria-label="v1 record chain" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}">${parts.join("")}</svg>`;
}
