import { mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ConvertAnswer } from '../../convert/convert-file.js';
import type { ConvertPool } from '../../convert/pool.js';
import { CONVERTER_VERSIONS } from '../../convert/types.js';
import { errorText, KbsyncError } from '../../shared/errors.js';
import { convertTypeOf, type ConvertType } from '../../shared/file-types.js';
import { sha256Hex } from '../../shared/sha256.js';
import type { ObservedFile, SkippedPath, SkipReason } from '../types.js';

/** The folder under the state's folder where converted Markdown and each document's outcome are kept. */
export function convertedDir(stateDir: string): string {
  return join(stateDir, 'converted');
}

/** Where the Markdown of content `sha256` is kept: what an upload of a converted document sends. */
export function markdownPath(dir: string, sha256: string): string {
  return join(dir, 'md', `${sha256.slice(0, 2)}`, `${sha256}.md`);
}

/** A document's outcome, kept by the SHA-256 of its bytes and its converter's version. */
type Outcome =
  | { ok: true; sha256: string; bytes: number; units: number }
  | { ok: false; skip: Extract<SkipReason, 'encrypted' | 'no-text' | 'convert-failed'>; reason: string };

/**
 * The conversions of a pass, kept on disk: a document whose bytes were converted before (the same or
 * another path, this run or an earlier one) is not converted again, whether it converted or failed.
 */
export class ConversionCache {
  readonly dir: string;
  private made = false;

  constructor(stateDir: string) {
    this.dir = convertedDir(stateDir);
  }

  private outcomePath(type: ConvertType, originalSha256: string): string {
    return join(this.dir, 'outcomes', originalSha256.slice(0, 2), `${originalSha256}.${type}-v${CONVERTER_VERSIONS[type]}.json`);
  }

  /** The outcome kept for these bytes, or null (never converted by this converter, or its Markdown is gone). */
  outcome(type: ConvertType, originalSha256: string): Outcome | null {
    let kept: Outcome;
    try {
      kept = JSON.parse(readFileSync(this.outcomePath(type, originalSha256), 'utf8')) as Outcome;
    } catch {
      return null;
    }
    if (kept.ok && !this.hasMarkdown(kept.sha256, kept.bytes)) return null;
    return kept;
  }

  hasMarkdown(sha256: string, bytes?: number): boolean {
    try {
      const st = statSync(markdownPath(this.dir, sha256));
      return bytes === undefined || st.size === bytes;
    } catch {
      return false;
    }
  }

  /** Keeps a conversion's outcome (and its Markdown): written to a temp name and renamed, so a crash leaves none half-written. */
  keep(type: ConvertType, originalSha256: string, outcome: Outcome, markdown?: string): void {
    try {
      this.ensureDir();
      if (outcome.ok && markdown !== undefined) writeAtomically(markdownPath(this.dir, outcome.sha256), markdown);
      writeAtomically(this.outcomePath(type, originalSha256), JSON.stringify(outcome));
    } catch (err) {
      throw new KbsyncError(
        'state_write_failed',
        `cannot keep a converted document in ${this.dir} (${errorText(err)}): free space or fix its permissions`,
        {
          cause: err,
        },
      );
    }
  }

  private ensureDir(): void {
    if (this.made) return;
    mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    // Walks and git read .gitignore: a state folder inside a source never uploads its own cache.
    writeFileSync(join(this.dir, '.gitignore'), '*\n');
    this.made = true;
  }
}

function writeAtomically(path: string, text: string): void {
  mkdirSync(join(path, '..'), { recursive: true, mode: 0o700 });
  const temp = `${path}.${process.pid}.tmp`;
  writeFileSync(temp, text);
  renameSync(temp, path);
}

export type ConvertStage = {
  cache: ConversionCache;
  pool: () => ConvertPool;
  /** Types whose converter changed since the state's Markdown was made: their files are converted again. */
  stale?: ReadonlySet<ConvertType>;
};

/**
 * Converts the documents a pass hashed (`files`: their sha256 is their own bytes' hash): each gets
 * its Markdown's SHA-256 and `converted`, from the cache or from a conversion in the pool. Returns
 * the files to leave out as skipped (not converted, or unreadable) and sets `sha256` to null on a
 * file whose bytes moved since they were hashed (deferred, as the hasher does).
 */
export async function convertHashed(files: readonly ObservedFile[], stage: ConvertStage): Promise<Map<ObservedFile, SkippedPath>> {
  const skipped = new Map<ObservedFile, SkippedPath>();
  const skip = (file: ObservedFile, reason: SkipReason, detail: string): void => {
    skipped.set(file, { source: file.source, path: file.path, reason, detail, size: file.size });
  };
  const apply = (file: ObservedFile, type: ConvertType, originalSha256: string, outcome: Outcome): void => {
    if (!outcome.ok) return skip(file, outcome.skip, outcome.reason);
    file.sha256 = outcome.sha256;
    file.converted = { type, markdownBytes: outcome.bytes, units: outcome.units, originalSha256 };
    if (stage.stale?.has(type) === true) file.converted.newConverter = true;
  };
  const work: Promise<void>[] = [];
  for (const file of files) {
    const type = convertTypeOf(file.path);
    const originalSha256 = file.sha256;
    if (type === null || originalSha256 === null) continue;
    const kept = stage.cache.outcome(type, originalSha256);
    if (kept !== null) {
      apply(file, type, originalSha256, kept);
      continue;
    }
    work.push(
      stage
        .pool()
        .convert({ absPath: file.absPath, type })
        .then((answer) => {
          const outcome = outcomeOf(answer, originalSha256);
          if (outcome === 'unreadable') return skip(file, 'unreadable', (answer as { unreadable: string }).unreadable);
          if (outcome === 'moved') {
            file.sha256 = null;
            return;
          }
          // A thread that died says nothing about the document: that failure is not kept, and the next pass tries again.
          if (!('passing' in answer && answer.passing === true))
            stage.cache.keep(type, originalSha256, outcome, 'result' in answer && answer.result.ok ? answer.result.markdown : undefined);
          apply(file, type, originalSha256, outcome);
        }),
    );
  }
  await Promise.all(work);
  return skipped;
}

function outcomeOf(answer: ConvertAnswer, originalSha256: string): Outcome | 'unreadable' | 'moved' {
  if ('unreadable' in answer) return 'unreadable';
  // The pool's own failures (a limit) read no bytes: they are the hashed bytes' outcome.
  if (answer.readSha256 !== '' && answer.readSha256 !== originalSha256) return 'moved';
  if (!answer.result.ok) return { ok: false, skip: answer.result.skip, reason: answer.result.reason };
  if (!('markdownSha256' in answer)) return { ok: false, skip: 'convert-failed', reason: 'the converter gave no Markdown' };
  return { ok: true, sha256: answer.markdownSha256, bytes: answer.markdownBytes, units: answer.result.units };
}

/** The Markdown kept for content `sha256`, checked against that hash; null when it is not kept (or does not match). */
export function readMarkdown(dir: string, sha256: string): Buffer | null {
  let bytes: Buffer;
  try {
    bytes = readFileSync(markdownPath(dir, sha256));
  } catch {
    return null;
  }
  return sha256Hex(bytes) === sha256 ? bytes : null;
}
