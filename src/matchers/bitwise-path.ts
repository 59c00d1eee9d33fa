// Paths into a compared value, kept as parent-linked nodes and rendered only when a difference is reported.
// Rendering follows JS syntax: `sample.rollout_log_probs[17]`, `sample.metadata["odd key"]`, `t[3, 0, 1]`.

/** One step of a path: the root name, a property, an array index, a Map key or a tensor coordinate. */
export interface PathNode {
  readonly parent: PathNode | null;
  readonly kind: "root" | "prop" | "index" | "mapKey" | "coords";
  readonly key: string | number;
}

const IDENTIFIER = /^[A-Za-z_$][\w$]*$/;

/** A path with only a root name. */
export function rootPath(name: string): PathNode {
  return { parent: null, kind: "root", key: name };
}

/** The path of a property of an object. */
export function propPath(parent: PathNode, key: string): PathNode {
  return { parent, kind: "prop", key };
}

/** The path of an array element. */
export function indexPath(parent: PathNode, index: number): PathNode {
  return { parent, kind: "index", key: index };
}

/** The path of a Map entry; `rendered` is the key as it should print. */
export function mapKeyPath(parent: PathNode, rendered: string): PathNode {
  return { parent, kind: "mapKey", key: rendered };
}

/** The path of a tensor element given its coordinates (row-major). */
export function coordsPath(parent: PathNode, coords: readonly number[]): PathNode {
  return { parent, kind: "coords", key: coords.join(", ") };
}

/** Renders a path node as a JS-like access expression. */
export function renderPath(node: PathNode): string {
  const parts: string[] = [];
  for (let cur: PathNode | null = node; cur !== null; cur = cur.parent) parts.push(renderStep(cur));
  return parts.reverse().join("");
}

function renderStep(node: PathNode): string {
  switch (node.kind) {
    case "root":
      return String(node.key);
    case "prop":
      return IDENTIFIER.test(String(node.key)) ? `.${node.key}` : `[${JSON.stringify(node.key)}]`;
    case "index":
    case "coords":
      return `[${node.key}]`;
    case "mapKey":
      return `.get(${node.key})`;
  }
}
