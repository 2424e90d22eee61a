import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { basename } from 'node:path';
import { errorText } from '../shared/errors.js';
import { converterOf } from './registry.js';
import { DEFAULT_CONVERT_LIMITS, type ConvertLimits, type ConvertResult, type ConvertType } from './types.js';

export type ConvertRequest = { absPath: string; type: ConvertType; limits?: ConvertLimits };

/**
 * One document converted: the SHA-256 of the bytes that were read (the caller compares it with the
 * hash it planned on: a file edited in between is not what was hashed), the result, and the
 * Markdown's own SHA-256 and size in UTF-8 bytes.
 */
export type ConvertAnswer =
  /** `passing`: the failure was the thread's, not the document's (it could not start, it died): not kept, tried again next pass. */
  | { readSha256: string; result: Extract<ConvertResult, { ok: false }>; passing?: true }
  | { readSha256: string; result: Extract<ConvertResult, { ok: true }>; markdownSha256: string; markdownBytes: number }
  | { unreadable: string };

/** Reads and converts one file on this thread. */
export async function convertFile(req: ConvertRequest): Promise<ConvertAnswer> {
  let bytes: Buffer;
  try {
    bytes = await readFile(req.absPath);
  } catch (err) {
    return { unreadable: errorText(err) };
  }
  const readSha256 = createHash('sha256').update(bytes).digest('hex');
  const convert = await converterOf(req.type);
  const result = await convert(new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength), {
    name: basename(req.absPath),
    limits: req.limits ?? DEFAULT_CONVERT_LIMITS,
  });
  if (!result.ok) return { readSha256, result };
  const markdown = Buffer.from(result.markdown, 'utf8');
  return {
    readSha256,
    result,
    markdownSha256: createHash('sha256').update(markdown).digest('hex'),
    markdownBytes: markdown.byteLength,
  };
}
