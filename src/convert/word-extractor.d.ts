// The parts of word-extractor (CommonJS, untyped) that doc-reader.ts uses.
declare module 'word-extractor/lib/word-ole-extractor.js' {
  type Piece = { startCp: number; endCp: number; startFilePos: number; bpc: number; text: string; length: number };
  class WordOleExtractor {
    _pieces: Piece[];
    _boundaries: { ccpText: number; ccpFtn: number; ccpHdd: number; ccpAtn: number; ccpEdn: number; ccpTxbx: number };
    extract(reader: unknown): Promise<unknown>;
    extractWordDocument(document: unknown, buffer: Buffer): Promise<unknown>;
    documentStream(document: unknown, name: string): Promise<NodeJS.ReadableStream>;
    streamBuffer(stream: NodeJS.ReadableStream): Promise<Buffer>;
    writeParagraphProperties(buffer: Buffer, tableBuffer: Buffer): void;
    writeCharacterProperties(buffer: Buffer, tableBuffer: Buffer): void;
    buildDocument(): unknown;
  }
  export = WordOleExtractor;
}
declare module 'word-extractor/lib/buffer-reader.js' {
  class BufferReader {
    constructor(buffer: Buffer);
    open(): Promise<void>;
    close(): Promise<void>;
  }
  export = BufferReader;
}
declare module 'word-extractor/lib/filters.js' {
  export function clean(text: string): string;
}
