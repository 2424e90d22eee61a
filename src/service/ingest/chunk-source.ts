import { hashedVector } from '../search/hashed-vector.js';
import { quantize } from '../store/chunk-vectors.js';
import type { ChunkInput } from '../store/chunks.js';
import type { ChunkOptions } from './chunk-options.js';
import { chunkDocument, chunkSectionsWithOrigin } from './chunker.js';
import { textSections } from './line-sections.js';
import type { ParseOptions, Parser } from './types.js';

/** How a file's chunks are handed to the writer: in batches of at most `batchSize` chunks or about `batchChars` characters. */
export type BatchOptions = { batchSize: number; batchChars: number };

/** What parses and chunks: the ingest pool's worker threads, or (tests with parsers of their own) this thread. */
export type ChunkSource = {
  /** True when a parser reads this file name. */
  supports(fileName: string): boolean;
  /** The file's chunks in batches; bad input throws KbsyncError `parse_failed`, a read error its errno Error. */
  fileBatches(file: { name: string; storedPath: string }): AsyncGenerator<ChunkInput[]>;
  /** The chunks of an intelligence entry. */
  entryChunks(entry: { title: string | null; content: string }): Promise<string[]>;
  close(): Promise<void>;
};

/** The chunks of an entry: its content split like Markdown, every chunk headed by the title when there is one. */
export function entryChunks(entry: { title: string | null; content: string }, chunking: ChunkOptions): string[] {
  const title = entry.title?.trim();
  const sections = textSections(entry.content, { markdown: true, ...(title ? { title } : {}) });
  return chunkDocument({ sections }, chunking);
}

/** Parses and chunks one file, yielding its chunks in batches (the unit of one write transaction). */
export async function* fileChunkBatches(
  parser: Parser,
  path: string,
  o: { parsing: ParseOptions; chunking: ChunkOptions } & BatchOptions,
): AsyncGenerator<ChunkInput[]> {
  let batch: ChunkInput[] = [];
  let chars = 0;
  for await (const chunk of chunkSectionsWithOrigin(parser.parse(path, o.parsing), o.chunking)) {
    // The hashed vector too: computed where the file is parsed, the writer only stores it.
    batch.push({ ...chunk, vector: quantize(hashedVector(chunk.text)) });
    chars += chunk.text.length;
    if (batch.length < o.batchSize && chars < o.batchChars) continue;
    yield batch;
    batch = [];
    chars = 0;
  }
  if (batch.length > 0) yield batch;
}

/** A source that parses on this thread with the given parsers (tests that bring parsers of their own). */
export function inlineChunkSource(
  parserFor: (fileName: string) => Parser | undefined,
  o: { parsing: ParseOptions; chunking: ChunkOptions } & BatchOptions,
): ChunkSource {
  return {
    supports: (name) => parserFor(name) !== undefined,
    fileBatches(file) {
      const parser = parserFor(file.name);
      if (parser === undefined) throw new Error(`no parser for ${file.name}`);
      return fileChunkBatches(parser, file.storedPath, o);
    },
    entryChunks: (entry) => Promise.resolve(entryChunks(entry, o.chunking)),
    close: () => Promise.resolve(),
  };
}
