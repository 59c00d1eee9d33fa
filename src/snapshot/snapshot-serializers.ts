// pretty-format plugins for bit trees: one that prints the matcher's already-written text verbatim, and a public
// one users hand to `expect.addSnapshotSerializer` so `toMatchSnapshot` writes Samples and tensors as bit trees.
import { serializeBitTree, type BitTreeTextOptions } from "./bit-tree-text";
import { Sample } from "../wire/sample";
import { Tensor } from "../wire/tensor";

const TEXT_BRAND = Symbol.for("jest-session-parity.bit-tree-text");

/** The value toMatchBitwiseSnapshot hands to the runner's snapshot state: its bit-tree text, printed as is. */
export class BitTreeSnapshotText {
  /** Brand the serializer recognises (a symbol, so copies from another module instance are recognised too). */
  readonly [TEXT_BRAND] = true;
  constructor(
    /** The text written into the snapshot file. */
    readonly text: string,
  ) {}
}

/** The pretty-format plugin shape shared by Jest and Vitest (`test` plus `serialize`). */
export interface BitTreePlugin {
  /** Whether this plugin prints `value`. */
  test(value: unknown): boolean;
  /** The printed form; lines after the first get the current indentation. */
  serialize(value: unknown, config: unknown, indentation: string): string;
}

/** Prints a {@link BitTreeSnapshotText} verbatim; registered by the package's setup entries. */
const bitTreeTextSerializer: BitTreePlugin = {
  test: (value) => typeof value === "object" && value !== null && (value as Record<symbol, unknown>)[TEXT_BRAND] === true,
  serialize: (value, _config, indentation) => indent((value as BitTreeSnapshotText).text, indentation),
};

let textSerializerRegistered = false;

/** The part of `expect` that registers snapshot serializers. */
export interface SnapshotSerializerHost {
  /** Jest's and Vitest's `expect.addSnapshotSerializer`. */
  addSnapshotSerializer?: (plugin: BitTreePlugin) => void;
}

/** Registers {@link bitTreeTextSerializer} on a runner's `expect` (done by `registerSessionParityMatchers`). */
export function registerBitTreeTextSerializer(host: SnapshotSerializerHost): void {
  if (typeof host.addSnapshotSerializer !== "function") return;
  host.addSnapshotSerializer(bitTreeTextSerializer);
  textSerializerRegistered = true;
}

/** True once {@link registerBitTreeTextSerializer} ran in this module instance. */
export function isBitTreeTextSerializerRegistered(): boolean {
  return textSerializerRegistered;
}

/**
 * A snapshot serializer that prints the values `test` accepts as bit trees (same text as toMatchBitwiseSnapshot,
 * no metadata projection unless given). For `expect.addSnapshotSerializer(createBitTreeSerializer(...))`.
 */
function createBitTreeSerializer(test: (value: unknown) => boolean, options: BitTreeTextOptions = {}): BitTreePlugin {
  return {
    test,
    serialize: (value, _config, indentation) => indent(serializeBitTree(value, options).text, indentation),
  };
}

/**
 * The ready-made bit-tree serializer: prints every {@link Sample}, {@link Tensor} and typed array as a bit tree
 * (`expect.addSnapshotSerializer(bitTreeSerializer)`), so plain `toMatchSnapshot` tells `-0` from `0`.
 */
export const bitTreeSerializer: BitTreePlugin = createBitTreeSerializer(
  (value) => value instanceof Sample || value instanceof Tensor || (ArrayBuffer.isView(value) && !(value instanceof DataView)),
);

function indent(text: string, indentation: string): string {
  return indentation === "" ? text : text.split("\n").join(`\n${indentation}`);
}
