// Draws a v2 retry tree and a v1 record chain as inline SVG: one column per node in commit order, one row per depth.
// Pure (data -> markup); roots, superseded retries, kept and failing leaves carry classes the page styles.
import { escapeHtml } from "./html-escape";
import type { ReportRecordView, ReportRunView } from "./types";

const COLUMN = 112;
const ROW = 64;
const BOX_W = 96;
const BOX_H = 44;
const PAD = 8;

/** What the page tells apart about a node: root, leaf, superseded retry (a leaf off the active path), kept, failing. */
interface TreeNodeMarks {
  root: boolean;
  leaf: boolean;
  superseded: boolean;
  kept: boolean;
  failing: boolean;
}

/**
 * The marks of every node. The active path is the one the session's records show (matched by response id); a leaf
 * off it is a superseded retry. `kept` means the samples op returned a sample from that leaf.
 */
function treeNodeMarks(run: Pick<ReportRunView, "tree" | "keptLeaves" | "records">, failing: readonly number[] = []): Map<number, TreeNodeMarks> {
  const marks = new Map<number, TreeNodeMarks>();
  if (run.tree === null) return marks;
  const leafIds = new Set(run.tree.leaves.map((leaf) => leaf.nodeId));
  const active = new Set(run.records.map((record) => record.responseId));
  for (const node of run.tree.nodes) {
    const leaf = leafIds.has(node.id);
    marks.set(node.id, {
      root: node.parent === null,
      leaf,
      superseded: leaf && !active.has(node.responseId),
      kept: run.keptLeaves.includes(node.id),
      failing: failing.includes(node.id),
    });
  }
  return marks;
}

function markClasses(marks: TreeNodeMarks | undefined): string {
  if (marks === undefined) return "node";
  const names = (["root", "leaf", "superseded", "kept", "failing"] as const).filter((name) => marks[name]);
  return ["node", ...names].join(" ");
}

function markWords(marks: TreeNodeMarks | undefined): string {
  if (marks === undefined) return "";
  const words = [
    marks.root ? "root" : null,
    marks.leaf ? (marks.superseded ? "superseded retry leaf" : "active leaf") : null,
    marks.kept ? "kept" : null,
    marks.failing ? "failing" : null,
  ];
  const text = words.filter((word) => word !== null).join(", ");
  return text === "" ? "" : ` (${text})`;
}

function box(x: number, y: number, cls: string, lines: string[], title: string): string {
  const text = lines.map((line, i) => `<text x="${x + BOX_W / 2}" y="${y + 15 + i * 13}" text-anchor="middle">${escapeHtml(line)}</text>`).join("");
  return `<g class="${cls}"><title>${escapeHtml(title)}</title><rect x="${x}" y="${y}" width="${BOX_W}" height="${BOX_H}" rx="6"/>${text}</g>`;
}

/**
 * A tidy layout: one row per depth; leaves take columns left to right in commit order (children visited in commit
 * order), and an inner node sits centred over its first and last child, so a retry chain stays one column wide.
 */
export function layoutTree(nodes: readonly { id: number; parent: number | null }[]): { depth: Map<number, number>; column: Map<number, number> } {
  const children = new Map<number | null, number[]>();
  const known = new Set(nodes.map((node) => node.id));
  for (const node of nodes) {
    const parent = node.parent !== null && known.has(node.parent) ? node.parent : null;
    children.set(parent, [...(children.get(parent) ?? []), node.id]);
  }
  const depth = new Map<number, number>();
  const column = new Map<number, number>();
  let nextLeaf = 0;
  const place = (id: number, level: number): void => {
    depth.set(id, level);
    const kids = children.get(id) ?? [];
    if (kids.length === 0) {
      column.set(id, nextLeaf++);
      return;
    }
    for (const kid of kids) place(kid, level + 1);
    column.set(id, ((column.get(kids[0]) ?? 0) + (column.get(kids[kids.length - 1]) ?? 0)) / 2);
  };
  for (const root of children.get(null) ?? []) place(root, 0);
  return { depth, column };
}

/** The v2 retry tree as SVG (leaves in `failing` marked as the failure's), or a short note when the run has no tree. */
export function drawRetryTree(run: Pick<ReportRunView, "tree" | "keptLeaves" | "records">, failing: readonly number[] = []): string {
  const tree = run.tree;
  if (tree === null || tree.nodes.length === 0) return `<p class="note">no retry tree</p>`;
  const marks = treeNodeMarks(run, failing);
  const { depth, column } = layoutTree(tree.nodes);
  const maxDepth = Math.max(...depth.values());
  const columns = Math.max(...column.values()) + 1;
  const width = columns * COLUMN + PAD;
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
      const mark = marks.get(node.id);
      const version = node.weightVersion === null ? "weight version not on the active path" : `weight version ${node.weightVersion}`;
      const title = `node ${node.id}${markWords(mark)}, parent ${node.parent ?? "none"}, ${node.numTokens} tokens, ${version}, response ${node.responseId}`;
      return box(x, y, markClasses(mark), [`#${node.id}`, `${node.weightVersion ?? "w –"} · ${node.numTokens} tok`], title);
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
