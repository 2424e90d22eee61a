/**
 * What a parser hands the chunker. A section is a unit the chunker never packs across (a Markdown
 * heading starts a new one) unless it `continues` the previous one: a streaming parser cuts a long
 * run of text or records into several sections to keep memory flat, and marks the later ones.
 */
export type ProseSection = {
  /** Heading path of the section ("Install > Linux"), repeated at the top of each of its chunks. */
  heading?: string;
  /** Paragraphs separated by blank lines; split at paragraphs, then lines, sentences, words. */
  text: string;
  continues?: boolean;
  /**
   * The last paragraph goes on in the next section, which `continues` this one and starts with the
   * paragraph's next line (a streaming parser cut a very long paragraph between two of its lines).
   */
  openParagraph?: boolean;
};

export type RecordSection = {
  heading?: string;
  /** Self-describing records (a CSV row as `col: value; ...`, a flattened JSON object); never split unless one alone is too long. */
  records: string[];
  /** Where each record came from, when the format has rows: its row number (1-based; a sheet's own row number). */
  rows?: number[];
  continues?: boolean;
};

export type Section = ProseSection | RecordSection;

export type ParsedDocument = { sections: Section[] };

export type ParseOptions = {
  /** Largest file a whole-file parser (JSON, XML, XLS) reads into memory. @default 32 MiB */
  maxWholeFileBytes?: number;
};

/** One parser per file format; a new format is a new module added to the registry, nothing else. */
export type Parser = {
  /** Lowercase extensions without the dot. */
  readonly extensions: readonly string[];
  /** Streams the file's sections; bad input throws KbsyncError `parse_failed` naming the line or field. */
  parse(path: string, options?: ParseOptions): AsyncIterable<Section>;
};

/** True when the section holds records rather than prose. */
export function isRecordSection(section: Section): section is RecordSection {
  return 'records' in section;
}

/**
 * Adds the prose section of a streaming parser's flush to `out`: when it has text, or when
 * `headingOnly` asks for a heading with nothing under it yet (its words still reach search).
 * `continues` marks a later section under the same heading. Returns whether one was added.
 */
export function pushProse(
  out: Section[],
  s: { text: string; heading: string | undefined; continues: boolean; openParagraph: boolean; headingOnly: boolean },
): boolean {
  if (s.text.trim() === '' && !(s.headingOnly && s.heading !== undefined)) return false;
  out.push({
    ...(s.heading === undefined ? {} : { heading: s.heading }),
    text: s.text,
    ...(s.continues ? { continues: true } : {}),
    ...(s.openParagraph ? { openParagraph: true } : {}),
  });
  return true;
}
