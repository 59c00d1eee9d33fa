// Streams corpus files line by line (`.jsonl`, and `.jsonl.gz` through gunzip): memory holds one line at a time,
// never the file. The files' edge; each line goes to the pure reader.
import { createReadStream } from "node:fs";
import { createInterface } from "node:readline";
import { createGunzip } from "node:zlib";
import { parseCorpusLine } from "./corpus-line";
import type { CorpusEntry } from "./types";

/** A corpus file that cannot be opened or decompressed (the CLI exits 2 naming it). */
export class CorpusFileError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "CorpusFileError";
  }
}

/**
 * Every non-blank line of `files` in order, each parsed ({@link parseCorpusLine}); the conversation index counts
 * those lines over all files. A `.gz` file is decompressed while read.
 * @throws CorpusFileError naming the file when it cannot be read or is not valid gzip
 */
export async function* readCorpus(files: readonly string[]): AsyncGenerator<CorpusEntry> {
  let index = 0;
  for (const file of files) {
    const raw = createReadStream(file);
    const stream = file.endsWith(".gz") ? raw.pipe(createGunzip()) : raw;
    let failure: Error | null = null;
    const fail = (error: Error): void => {
      failure ??= error;
      stream.destroy();
    };
    raw.on("error", fail);
    stream.on("error", fail);
    const lines = createInterface({ input: stream, crlfDelay: Infinity });
    let line = 0;
    try {
      for await (const text of lines) {
        line += 1;
        const entry = parseCorpusLine(text, { file, line, index });
        if (entry === null) continue;
        index += 1;
        yield entry;
      }
    } catch (error) {
      failure ??= error as Error;
    } finally {
      lines.close();
      raw.destroy();
    }
    if (failure !== null) throw new CorpusFileError(`cannot read the corpus file ${file}: ${failure.message}`);
  }
}
