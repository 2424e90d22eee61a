import { hasTwoLines, PARAGRAPH_BREAK, paragraphLinePieces, truncateAtWord, unitPieces, wordTail, type Piece } from './split.js';
import { createTokenGauge, emitWithinTokens, withinTokens } from './token-budget.js';
import { isRecordSection, type ParsedDocument, type Section } from './types.js';
import { DEFAULT_CHUNK_OPTIONS, type ChunkOptions } from './chunk-options.js';

export { DEFAULT_CHUNK_OPTIONS, type ChunkOptions } from './chunk-options.js';
const DEFAULT_MAX_TOKENS = 512;
const MIN_MAX_TOKENS = 96;

const MIN_MAX_CHARS = 64;

/** Where a chunk came from: its section's heading path (or sheet), and the rows its records hold. */
export type ChunkOrigin = { heading: string | null; firstRow: number | null; lastRow: number | null };
/** A chunk's text and origin. */
export type Chunk = ChunkOrigin & { text: string };

type Packer = { section(section: Section): void; finish(): void };

/**
 * Packs a section's pieces greedily into chunks of at most maxChars, each starting with the section's
 * heading path. Pieces are paragraphs (prose) or records, cut at lines, sentences, then words only
 * when one alone is too long; a word is cut only when it alone is longer than a chunk.
 * Consecutive prose chunks share an overlap of whole trailing pieces (or, failing that, trailing
 * words) of at most overlapChars. Deterministic: the same sections always give the same chunks.
 */
function createPacker(options: ChunkOptions, emit: (chunk: Chunk) => void): Packer {
  const maxChars = Math.max(MIN_MAX_CHARS, Math.floor(options.maxChars));
  const overlapChars = Math.max(0, Math.min(Math.floor(options.overlapChars), Math.floor(maxChars / 2)));
  const maxTokens = Math.max(MIN_MAX_TOKENS, Math.floor(options.maxTokens ?? DEFAULT_MAX_TOKENS));
  const gauge = createTokenGauge(maxTokens);
  let prefix = '';
  let heading: string | null = null;
  let prose = true;
  let current: Piece[] = [];
  let length = 0;

  // Dense text (numbers, CJK) packs fewer characters, so that its chunks are rarely cut again for tokens.
  // A long heading path still leaves room for text (the token check then cuts what does not fit).
  const budget = (): number => Math.max(MIN_MAX_CHARS / 2, Math.max(MIN_MAX_CHARS, gauge.charsFor(maxChars)) - prefix.length);
  const joined = (pieces: Piece[]): string => pieces.map((p, i) => (i === 0 ? p.text : p.sep + p.text)).join('');

  const overlapOf = (done: Piece[]): Piece[] => {
    if (!prose || overlapChars === 0) return [];
    const kept: Piece[] = [];
    let size = 0;
    for (let i = done.length - 1; i > 0; i--) {
      const piece = done[i] as Piece;
      const add = piece.text.length + (kept.length > 0 ? (kept[0] as Piece).sep.length : 0);
      if (size + add > overlapChars) break;
      kept.unshift(piece);
      size += add;
    }
    if (kept.length > 0) return kept;
    const tail = wordTail((done.at(-1) as Piece).text, overlapChars);
    return tail === '' || tail === (done.at(-1) as Piece).text ? [] : [{ text: tail, sep: '' }];
  };

  const emitText = (text: string, pieces: readonly Piece[]): void => {
    let firstRow: number | null = null;
    let lastRow: number | null = null;
    for (const p of pieces) {
      if (p.row === undefined) continue;
      if (firstRow === null || p.row < firstRow) firstRow = p.row;
      if (lastRow === null || p.row > lastRow) lastRow = p.row;
    }
    emit({ text, heading, firstRow, lastRow });
  };

  /** Emits pieces as one chunk when within the token budget; else as two halves (by pieces, then by text), each checked again. */
  const emitPieces = (pieces: Piece[]): void => {
    const body = joined(pieces);
    if (pieces.length === 1) {
      emitWithinTokens(prefix, body, maxTokens, (text) => emitText(text, pieces));
      return;
    }
    if (gauge.fits(prefix + body)) {
      emitText(prefix + body, pieces);
      return;
    }
    const half = Math.ceil(pieces.length / 2);
    emitPieces(pieces.slice(0, half));
    emitPieces(pieces.slice(half));
  };

  const emitCurrent = (): Piece[] => {
    const done = current;
    if (done.length > 0) emitPieces(done);
    current = [];
    length = 0;
    return done;
  };

  const add = (piece: Piece): void => {
    if (current.length > 0 && length + piece.sep.length + piece.text.length > budget()) {
      let carry = overlapOf(emitCurrent());
      while (carry.length > 0 && joined(carry).length + piece.sep.length + piece.text.length > budget()) carry = carry.slice(1);
      current = carry;
      length = joined(carry).length;
    }
    length += (current.length > 0 ? piece.sep.length : 0) + piece.text.length;
    current.push(piece);
  };

  // A paragraph cut by the parser (`openParagraph`), waiting for its next lines: its text while it may
  // still fit one chunk, or 'lines' once it is known to be cut line by line (its lines are then packed
  // as they come). Either way the pieces are exactly those of the whole paragraph.
  let open: { text: string } | 'lines' | undefined;

  const addAll = (pieces: Piece[]): void => {
    for (const piece of pieces) add(piece);
  };

  const closeOpen = (): void => {
    if (open !== undefined && open !== 'lines' && open.text !== '') addAll(unitPieces(open.text, budget(), '\n\n'));
    open = undefined;
  };

  const prosePieces = (s: { text: string; openParagraph?: boolean }, continuesOpen: boolean): void => {
    let text = s.text;
    let lineMode = false;
    const before = continuesOpen ? open : undefined;
    if (before === 'lines') {
      // A stand-in for the paragraph's previous line, so that a break at the very start still counts.
      text = `-\n${text}`;
      lineMode = true;
    } else if (before !== undefined) text = `${before.text}\n${text}`;
    open = undefined;
    const paragraphs = text.split(PARAGRAPH_BREAK);
    const last = paragraphs.length - 1;
    paragraphs.forEach((raw, i) => {
      const isOpen = s.openParagraph === true && i === last;
      if (i === 0 && lineMode) {
        addAll(paragraphLinePieces(raw.slice(2), budget(), '\n'));
        if (isOpen) open = 'lines';
        return;
      }
      const paragraph = raw.trim();
      if (paragraph === '') return;
      if (!isOpen) addAll(unitPieces(paragraph, budget(), '\n\n'));
      else if (paragraph.length > budget() && hasTwoLines(paragraph)) {
        addAll(paragraphLinePieces(paragraph, budget(), '\n\n'));
        open = 'lines';
      } else open = { text: paragraph };
    });
  };

  const section = (s: Section): void => {
    const fullHeading = s.heading?.trim() ?? '';
    // The heading path starts every chunk of the section: at most a third of a chunk, in characters and tokens.
    let shown = truncateAtWord(fullHeading, Math.floor(maxChars / 3));
    while (shown.length > 8 && !withinTokens(shown, Math.floor(maxTokens / 3))) shown = truncateAtWord(shown, Math.floor(shown.length / 2));
    const nextPrefix = shown === '' ? '' : `${shown}\n`;
    const isProse = !isRecordSection(s);
    const continues = s.continues === true && nextPrefix === prefix && isProse === prose;
    const continuesOpen = continues && isProse && open !== undefined;
    if (!continuesOpen) closeOpen();
    if (!continues) emitCurrent();
    prefix = nextPrefix;
    heading = fullHeading === '' ? null : fullHeading;
    prose = isProse;
    if (isRecordSection(s)) {
      let any = false;
      s.records.forEach((record, i) => {
        const unit = record.trim();
        if (unit === '') return;
        any = true;
        const pieces = unitPieces(unit, budget(), '\n');
        const row = s.rows?.[i];
        if (row !== undefined) for (const p of pieces) p.row = row;
        addAll(pieces);
      });
      if (!any && shown !== '' && s.continues !== true) emitText(shown, []);
      return;
    }
    if (s.continues !== true && shown !== '' && s.text.trim() === '') {
      emitText(shown, []);
      return;
    }
    prosePieces(s, continuesOpen);
  };

  const finish = (): void => {
    closeOpen();
    emitCurrent();
  };

  return { section, finish };
}

/** The chunks of a parsed document, in order, with where each came from. */
export function chunkDocumentWithOrigin(doc: ParsedDocument, options: ChunkOptions = DEFAULT_CHUNK_OPTIONS): Chunk[] {
  const chunks: Chunk[] = [];
  const packer = createPacker(options, (c) => chunks.push(c));
  for (const section of doc.sections) packer.section(section);
  packer.finish();
  return chunks;
}

/** The chunks of a parsed document, in order. */
export function chunkDocument(doc: ParsedDocument, options: ChunkOptions = DEFAULT_CHUNK_OPTIONS): string[] {
  return chunkDocumentWithOrigin(doc, options).map((c) => c.text);
}

/** The chunks of a stream of sections. */
export async function* chunkSections(
  sections: AsyncIterable<Section> | Iterable<Section>,
  options: ChunkOptions = DEFAULT_CHUNK_OPTIONS,
): AsyncGenerator<string> {
  for await (const chunk of chunkSectionsWithOrigin(sections, options)) yield chunk.text;
}

/** The chunks of a stream of sections with where each came from, produced as the sections arrive (memory stays flat). */
export async function* chunkSectionsWithOrigin(
  sections: AsyncIterable<Section> | Iterable<Section>,
  options: ChunkOptions = DEFAULT_CHUNK_OPTIONS,
): AsyncGenerator<Chunk> {
  let ready: Chunk[] = [];
  const packer = createPacker(options, (c) => ready.push(c));
  for await (const section of sections) {
    packer.section(section);
    if (ready.length > 0) {
      yield* ready;
      ready = [];
    }
  }
  packer.finish();
  yield* ready;
}
