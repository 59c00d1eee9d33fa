// A cassette file opened for replay or for recording: the file I/O around the pure codec. Appends are one write of
// one whole line each, so a crash loses at most the line in flight, and nothing already recorded is ever rewritten.
import * as fs from "node:fs";
import {
  CASSETTE_FORMAT_VERSION,
  CassetteError,
  decodeCassette,
  encodeHeader,
  encodeInteraction,
  readInteraction,
  readReply,
  type CassetteEntry,
  type CassetteHeader,
  type CassetteInteraction,
  type CassetteReply,
} from "./cassette-codec";
import { describeDeparture, describeRequest, nearer, nearness, type KeyedRequest, type Nearness } from "./cassette-key";
import type { CassetteVocabulary } from "./cassette-vocabulary";

/** Options of {@link CassetteStore.open}. */
export interface OpenCassetteOptions {
  /** The cassette file. */
  file: string;
  /** The vocabulary the backend serves: a cassette recorded with another is refused. */
  vocabulary: CassetteVocabulary;
  /** Open for appending (created with its header when missing); default false: replay only (the file must exist). */
  record?: boolean;
  /** Where warnings go (a truncated last line); default `process.emitWarning`. */
  warn?: (message: string) => void;
}

/** A cassette's recorded replies by key, and (when recording) its append handle. */
export class CassetteStore {
  private readonly replies = new Map<string, CassetteReply>();

  private constructor(
    /** The file as named by the caller. */
    readonly file: string,
    /** The header read or written. */
    readonly header: CassetteHeader,
    private readonly entries: Map<string, CassetteEntry>,
    private fd: number | null,
    private nextLine: number,
  ) {}

  /**
   * Opens a cassette. A last line cut short (a recorder stopped mid-write) is warned about and left out; when
   * recording, its bytes are first copied to `<file>.truncated-line-<n>` and then cut from the file, so new lines
   * start on a line of their own.
   * @throws CassetteError for a missing file (replay), a foreign or unknown-format header, another vocabulary, a bad line, or a key recorded with two replies; the file is left untouched
   */
  static open(options: OpenCassetteOptions): CassetteStore {
    const { file, vocabulary } = options;
    const record = options.record ?? false;
    const warn = options.warn ?? ((message: string) => process.emitWarning(message, "SessionParityCassetteWarning"));
    let text: Buffer | null;
    try {
      text = fs.readFileSync(file);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw new CassetteError(`cannot read cassette ${file}: ${(error as Error).message}`);
      text = null;
    }
    if (text === null || (record && text.length === 0)) {
      if (!record) throw new CassetteError(`cassette ${file} not found (record one with: session-parity mock --record ${file} --upstream <your SGLang URL>)`);
      const header = { format: CASSETTE_FORMAT_VERSION, family: vocabulary.family, vocabulary: vocabulary.vocabulary };
      const fd = fs.openSync(file, "a");
      fs.writeSync(fd, `${encodeHeader(header)}\n`);
      return new CassetteStore(file, header, new Map(), fd, 2);
    }
    const decoded = decodeCassette(text, `cassette ${file}`);
    const { header } = decoded;
    if (header.family !== vocabulary.family || header.vocabulary !== vocabulary.vocabulary) {
      throw new CassetteError(
        `cassette ${file} was recorded with family ${header.family}, vocabulary ${header.vocabulary}; this backend serves family ${vocabulary.family}, ` +
          `vocabulary ${vocabulary.vocabulary}: refused (its token ids would mean other text; pass the --tito-model and --hf-checkpoint it was recorded with)`,
      );
    }
    const tail = decoded.truncatedTail;
    let fd: number | null = null;
    if (record) {
      fd = fs.openSync(file, "r+");
      if (tail !== null) {
        const aside = `${file}.truncated-line-${tail.line}`;
        fs.writeFileSync(aside, tail.text);
        fs.ftruncateSync(fd, tail.offset);
        warn(
          `cassette ${file}: line ${tail.line} was cut short (the exchange in flight when recording stopped); moved its bytes to ${aside} and recording goes on after line ${tail.line - 1}`,
        );
      }
      fs.closeSync(fd);
      fd = fs.openSync(file, "a");
      if (tail === null && !decoded.endsWithNewline) fs.writeSync(fd, "\n");
    } else if (tail !== null) {
      warn(`cassette ${file}: line ${tail.line} was cut short (the exchange in flight when recording stopped) and is left out; every line before it is served`);
    }
    return new CassetteStore(file, header, decoded.entries, fd, decoded.lineCount + 1);
  }

  /** Interactions recorded (distinct keys). */
  get size(): number {
    return this.entries.size;
  }

  /** Whether `key` is recorded. */
  has(key: string): boolean {
    return this.entries.has(key);
  }

  /**
   * The recorded reply of `key`, or undefined.
   * @throws CassetteError naming the line when the recorded line is not a valid interaction
   */
  lookup(key: string): CassetteReply | undefined {
    const kept = this.replies.get(key);
    if (kept !== undefined) return kept;
    const entry = this.entries.get(key);
    if (entry === undefined) return undefined;
    const reply = readReply(entry, `cassette ${this.file}`);
    this.replies.set(key, reply);
    return reply;
  }

  /** Why `request` has no recorded reply, naming it and the nearest recorded request (longest common prompt prefix). */
  missMessage(request: KeyedRequest): string {
    const head = `cassette ${this.file} has no recorded reply for ${describeRequest(request)} (key ${request.key.slice(0, 16)})`;
    let best: { interaction: CassetteInteraction; near: Nearness; line: number } | undefined;
    for (const entry of this.entries.values()) {
      let interaction: CassetteInteraction;
      try {
        interaction = readInteraction(entry, `cassette ${this.file}`);
      } catch {
        continue;
      }
      const near = nearness(request, interaction.request);
      if (best === undefined || nearer(near, best.near)) best = { interaction, near, line: entry.line };
    }
    if (best === undefined) return `${head}; it records no interaction at all`;
    const recorded = best.interaction.request;
    return (
      `${head}; nearest recorded: line ${best.line}, ${describeRequest(recorded)} (key ${recorded.key.slice(0, 16)}): ${describeDeparture(request, recorded, best.near)}. ` +
      `A cassette never invents a reply: record this request against your backend (session-parity mock --record ${this.file} --upstream <URL>)`
    );
  }

  /**
   * Appends one interaction as one line (one write) and serves it from now on. A key already recorded is not written again.
   * @throws Error when the store was opened for replay only
   */
  append(interaction: CassetteInteraction): void {
    if (this.fd === null) throw new Error(`cassette ${this.file} is open for replay only`);
    const key = interaction.request.key;
    if (this.entries.has(key)) return;
    const text = encodeInteraction(interaction);
    fs.writeSync(this.fd, `${text}\n`);
    const data = Buffer.from(text, "utf8");
    this.entries.set(key, { key, line: this.nextLine, data, start: 0, end: data.length });
    this.replies.set(key, interaction.reply);
    this.nextLine++;
  }

  /** Closes the append handle (idempotent). */
  close(): void {
    if (this.fd !== null) fs.closeSync(this.fd);
    this.fd = null;
  }
}
