// The file edge of bitwise snapshots: large values stored in full as `.safetensors` files beside the snapshot file.
// Files are named by the SHA-256 the snapshot line carries, so a line and its file can never disagree unnoticed.
import * as fs from "node:fs";
import * as path from "node:path";
import { sha256Hex } from "./array-digest";
import { readSafetensors, writeSafetensorsChunks } from "../wire/safetensors";
import type { Tensor } from "../wire/tensor";

const STORED_LINE = / sha256 ([0-9a-f]{64}) stored$/gm;
const TENSOR_NAME = "data";

/** Path of the file holding the bytes of a stored large value: `<snapshot file>.<sha256>.safetensors`. */
export function largeValuePath(snapshotPath: string, sha256: string): string {
  return `${snapshotPath}.${sha256}.safetensors`;
}

/** Writes each large value that has no file yet (same name, same content: an existing file is kept). */
export function writeLargeValues(snapshotPath: string, values: ReadonlyMap<string, Tensor>): void {
  if (values.size === 0) return;
  fs.mkdirSync(path.dirname(snapshotPath), { recursive: true });
  for (const [sha256, tensor] of values) {
    const file = largeValuePath(snapshotPath, sha256);
    if (fs.existsSync(file)) continue;
    const temporary = `${file}.${process.pid}.tmp`;
    const handle = fs.openSync(temporary, "w");
    try {
      for (const chunk of writeSafetensorsChunks(new Map([[TENSOR_NAME, tensor]]))) fs.writeSync(handle, chunk);
    } finally {
      fs.closeSync(handle);
    }
    fs.renameSync(temporary, file);
  }
}

/** A stored large value, or why it cannot be used (missing file, unreadable, bytes not matching the name). */
export function readLargeValue(snapshotPath: string, sha256: string): { tensor: Tensor } | { problem: string } {
  const file = largeValuePath(snapshotPath, sha256);
  if (!fs.existsSync(file)) return { problem: `${file} is missing` };
  try {
    const tensor = readSafetensors(fs.readFileSync(file)).tensors.get(TENSOR_NAME);
    if (tensor === undefined) return { problem: `${file} holds no tensor named ${JSON.stringify(TENSOR_NAME)}` };
    if (sha256Hex(tensor) !== sha256) return { problem: `${file} does not hold the bytes its name says (edited by hand?)` };
    return { tensor };
  } catch (error) {
    return { problem: `${file} cannot be read: ${error instanceof Error ? error.message : String(error)}` };
  }
}

/** The SHA-256 of every stored value a snapshot text refers to. */
function storedDigests(text: string): string[] {
  return [...text.matchAll(STORED_LINE)].map((match) => match[1]);
}

/**
 * Removes the stored-value files of `snapshotPath` that none of `keptTexts` refers to (the texts of the snapshots
 * that stay in the file once the runner has saved it). Returns the removed paths.
 */
export function removeUnreferencedLargeValues(snapshotPath: string, keptTexts: Iterable<string>): string[] {
  const directory = path.dirname(snapshotPath);
  if (!fs.existsSync(directory)) return [];
  const referenced = new Set<string>();
  for (const text of keptTexts) for (const sha256 of storedDigests(text)) referenced.add(sha256);
  const prefix = `${path.basename(snapshotPath)}.`;
  const removed: string[] = [];
  for (const name of fs.readdirSync(directory)) {
    const match = /^([0-9a-f]{64})\.safetensors$/.exec(name.startsWith(prefix) ? name.slice(prefix.length) : "");
    if (match === null || referenced.has(match[1])) continue;
    fs.rmSync(path.join(directory, name), { force: true });
    removed.push(path.join(directory, name));
  }
  return removed;
}

/** 1-based line of `key`'s `exports[...]` header in a snapshot file, or null when the file or key is not there. */
export function snapshotHeaderLine(snapshotPath: string, key: string): number | null {
  let content: string;
  try {
    content = fs.readFileSync(snapshotPath, "utf8");
  } catch {
    return null;
  }
  const header = `exports[\`${key.replace(/`|\\|\$\{/g, "\\$&")}\`] = \``;
  const at = content.indexOf(header);
  if (at < 0) return null;
  let line = 1;
  for (let i = content.indexOf("\n"); i >= 0 && i < at; i = content.indexOf("\n", i + 1)) line += 1;
  return line;
}
