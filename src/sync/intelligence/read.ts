import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Source } from '../../config/schema.js';
import { sha256Hex } from '../../shared/sha256.js';
import { observeSources } from '../sources/index.js';
import { isIntelligenceFile, parseEntries, type EntryProblem } from './parse.js';

/** One entry of an intelligence source, read and hashed: what the planner decides about. */
export type EntryCandidate = {
  source: string;
  /** `file#key`. */
  path: string;
  line: number;
  agentId: string;
  /** SHA-256 (hex) of the content's UTF-8 bytes: the service's dedupe key (docs/api.md). */
  sha256: string;
  content: string;
  title: string | null;
  metadata: Record<string, unknown> | undefined;
};

/** A record that could not be read: the file, the line, the field and what is wrong. */
export type RecordProblem = EntryProblem & { source: string; file: string; agentId: string };

/** The file hash an intelligence source's walk gives every file: entries are hashed, files are not. */
const NOT_HASHED = 'not hashed';

/** A file of an intelligence source that is no entry file (a .txt, a .pdf...). */
export type OtherFile = { source: string; file: string; agentId: string };

/** What the intelligence sources hold. */
export type IntelObservation = { entries: EntryCandidate[]; problems: RecordProblem[]; others: OtherFile[] };

/**
 * Reads every intelligence source: its files are found as a sync finds files (include, exclude,
 * ignore files, never secrets; a git source at its ref), and each JSONL, JSON, YAML, CSV or Markdown
 * file is parsed into entries, in (source, path) order. Other files are listed apart (`others`: the
 * plan shows each as skip:unsupported). A file that cannot be read is one problem; a bad record is one problem, the rest of
 * its file is still read.
 */
export async function readIntelligenceSources(sources: readonly Source[], stateDir: string): Promise<IntelObservation> {
  const out: IntelObservation = { entries: [], problems: [], others: [] };
  if (sources.length === 0) return out;
  // Entries are compared by their content, not by their file's: no file is hashed (a hash is "known" for each).
  const observation = await observeSources(sources, { stateDir, known: { knownSha256: () => NOT_HASHED } });
  const roots = new Map(observation.sources.map((s) => [s.name, s.root]));
  const bySource = new Map(sources.map((s) => [s.name, s]));
  const agentOf = (name: string): string => (bySource.get(name)?.agent as string | undefined) ?? '';
  const files: { source: string; path: string; absPath: string }[] = observation.files.map((f) => ({
    source: f.source,
    path: f.path,
    absPath: f.absPath,
  }));
  // YAML is no upload type: the walk lists it as unsupported, and an intelligence source reads it.
  for (const s of observation.skipped) {
    if (s.reason === 'unsupported' && !isIntelligenceFile(s.path))
      out.others.push({ source: s.source, file: s.path, agentId: agentOf(s.source) });
    if (s.reason === 'unsupported' && isIntelligenceFile(s.path))
      files.push({ source: s.source, path: s.path, absPath: join(roots.get(s.source) ?? '', s.path) });
  }
  files.sort((a, b) => (a.source < b.source ? -1 : a.source > b.source ? 1 : a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  for (const file of files) {
    if (!isIntelligenceFile(file.path)) {
      out.others.push({ source: file.source, file: file.path, agentId: agentOf(file.source) });
      continue;
    }
    const source = bySource.get(file.source) as Source;
    const agentId = source.agent as string;
    let text: string;
    try {
      text = await readFile(file.absPath, 'utf8');
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code ?? 'error';
      out.problems.push({ source: file.source, file: file.path, agentId, line: 1, field: null, message: `cannot read the file (${code})` });
      continue;
    }
    const parsed = parseEntries(file.path, text, source.contentField ?? 'content');
    for (const p of parsed.problems) out.problems.push({ ...p, source: file.source, file: file.path, agentId });
    for (const e of parsed.entries) {
      out.entries.push({
        source: file.source,
        path: `${file.path}#${e.key}`,
        line: e.line,
        agentId,
        sha256: sha256Hex(e.content),
        content: e.content,
        title: e.title ?? null,
        metadata: e.metadata,
      });
    }
  }
  return out;
}
