// Jest's node environment plus one tokenizer load per worker: Jest gives every test file fresh modules, so each file
// that starts a server would otherwise parse the 11 MB tokenizer.json and build the library tokenizer again (~1 s).
import { readFile, stat } from "node:fs/promises";
import * as path from "node:path";
import { Tokenizer as HfTokenizer } from "@huggingface/tokenizers";
import { TestEnvironment as NodeEnvironment } from "jest-environment-node";
import { buildByteLevelTable, tableDecodable, vocabularyFromLibrary, type ByteLevelTable } from "./src/tokenizer/byte-level-decoder";
import { SHARED_TOKENIZER_FILES, type DerivedTokenizerTables, type ParsedTokenizerFiles, type SharedTokenizerFiles } from "./src/tokenizer/shared-files";
import { vocabularySize } from "./src/tokenizer/vocabulary-size";

interface Loaded extends ParsedTokenizerFiles {
  /** Sizes and modification times of both files when they were read: a rewritten checkpoint is read again. */
  stamp: string;
}

async function stampOf(directory: string): Promise<string> {
  const files = await Promise.all(["tokenizer.json", "tokenizer_config.json"].map((name) => stat(path.join(directory, name))));
  return files.map((file) => `${file.size}:${file.mtimeMs}`).join("/");
}

async function readParsed(directory: string, stamp: string): Promise<Loaded> {
  const [tokenizerText, configText] = await Promise.all(
    ["tokenizer.json", "tokenizer_config.json"].map((name) => readFile(path.join(directory, name), "utf8")),
  );
  return { tokenizerJson: JSON.parse(tokenizerText) as Record<string, unknown>, tokenizerConfig: JSON.parse(configText) as Record<string, unknown>, stamp };
}

/**
 * The worker's store. It lives in the worker's own module registry (the environment's), not in a test file's, so
 * it outlasts each file; the objects it lends are read-only inputs and a library tokenizer that keeps no per-call state.
 */
class WorkerTokenizerFiles implements SharedTokenizerFiles {
  /** Directories kept, most recently used last: the packaged files plus one copied or synthetic checkpoint. */
  private static readonly KEPT = 2;
  private readonly byDirectory = new Map<string, Promise<Loaded | null>>();
  private readonly built = new WeakMap<object, HfTokenizer>();
  /** By lent tokenizer.json: its config and the tables derived from the pair (built here, in the worker's realm). */
  private readonly tables = new WeakMap<object, { tokenizerConfig: object; tables: DerivedTokenizerTables }>();

  async files(directory: string): Promise<ParsedTokenizerFiles | null> {
    let stamp: string;
    try {
      stamp = await stampOf(directory);
    } catch {
      return null;
    }
    const cached = this.byDirectory.get(directory);
    const hit = cached === undefined ? null : await cached;
    if (hit !== null && hit.stamp === stamp) {
      this.byDirectory.delete(directory);
      this.byDirectory.set(directory, Promise.resolve(hit));
      return hit;
    }
    const pending = readParsed(directory, stamp).then(
      (loaded) => {
        try {
          const library = new HfTokenizer(loaded.tokenizerJson, loaded.tokenizerConfig);
          this.built.set(loaded.tokenizerJson, library);
          this.tables.set(loaded.tokenizerJson, { tokenizerConfig: loaded.tokenizerConfig, tables: derivedTables(loaded, library) });
        } catch {
          return null; // the test file's own load builds it again and reports the problem
        }
        return loaded;
      },
      () => null,
    );
    this.byDirectory.delete(directory);
    this.byDirectory.set(directory, pending);
    for (const oldest of this.byDirectory.keys()) {
      if (this.byDirectory.size <= WorkerTokenizerFiles.KEPT) break;
      this.byDirectory.delete(oldest);
    }
    return pending;
  }

  libraryTokenizer(tokenizerJson: object): HfTokenizer | undefined {
    return this.built.get(tokenizerJson);
  }

  derived(tokenizerJson: object, tokenizerConfig: object): DerivedTokenizerTables | undefined {
    const entry = this.tables.get(tokenizerJson);
    return entry !== undefined && entry.tokenizerConfig === tokenizerConfig ? entry.tables : undefined;
  }
}

/** The vocabulary walks a tokenizer needs (its size, the decoder's tables), each done once, on first request. */
function derivedTables(files: ParsedTokenizerFiles, library: HfTokenizer): DerivedTokenizerTables {
  let size: number | undefined;
  let table: ByteLevelTable | null | undefined;
  return {
    vocabSize: () => (size ??= vocabularySize(files.tokenizerJson)),
    byteLevelTable: () =>
      (table ??= tableDecodable(files.tokenizerJson, files.tokenizerConfig)
        ? buildByteLevelTable(vocabularyFromLibrary(library, files.tokenizerConfig))
        : null),
  };
}

const store = new WorkerTokenizerFiles();

/**
 * `testEnvironment` of the package's own suite: Jest's node environment lending the worker's tokenizer store, in a
 * context whose global is an ordinary object.
 *
 * Jest's environment makes its context from a sandbox (a Proxy that tracks what is set on the global, to clear it
 * at teardown), so every global name a test or the code under test reads (`Math`, `Object`, `Buffer`, ...) goes
 * through Node's interceptor and that Proxy: about 130 ns a read, 100 times an ordinary one, which made hot loops
 * (hashing ids, comparing values, fast-check's and expect's own code) run many times slower here than in a user's
 * process. The context is made with `vm.constants.DONT_CONTEXTIFY` instead; Jest then installs its globals on it
 * as usual. What is given up is only Jest's clearing of globals a test file left behind at teardown: the whole
 * context is dropped with the file anyway.
 */
export default class SessionParityTestEnvironment extends NodeEnvironment {
  constructor(...args: ConstructorParameters<typeof NodeEnvironment>) {
    // Jest reads `createContext` off the node:vm module object itself when it builds the context (an import would
    // bind a copy): answer that one call, and put the original back whatever happens.
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const vmModule = require("node:vm") as typeof import("node:vm");
    const contextify = vmModule.createContext;
    vmModule.createContext = () => contextify(vmModule.constants.DONT_CONTEXTIFY);
    try {
      super(...args);
    } finally {
      vmModule.createContext = contextify;
    }
    (this.global as unknown as { [SHARED_TOKENIZER_FILES]: SharedTokenizerFiles })[SHARED_TOKENIZER_FILES] = store;
  }
}
