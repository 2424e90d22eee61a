import { readFileSync, writeFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ERROR_TABLE } from '../../src/cli/error-table.js';
import { renderErrorsReference } from '../../src/cli/errors-reference.js';

const DOC = new URL('../../docs/errors.md', import.meta.url);
const ERRORS_SOURCE = new URL('../../src/shared/errors.ts', import.meta.url);

describe('docs/errors.md', () => {
  it('is exactly what renderErrorsReference() builds from the error table', () => {
    const rendered = renderErrorsReference();
    if (process.env.KBSYNC_UPDATE_DOCS === '1') writeFileSync(DOC, rendered);

    expect(readFileSync(DOC, 'utf8')).toEqual(rendered);
  });

  it('has a row for every code of the ErrorCode union, and no other', () => {
    const union = readFileSync(ERRORS_SOURCE, 'utf8').match(/export type ErrorCode =([^;]+);/)?.[1] ?? '';
    const codes = [...union.matchAll(/'([a-z_]+)'/g)].map((m) => m[1]);

    expect(codes.length).toBeGreaterThan(20);
    expect(Object.keys(ERROR_TABLE).sort()).toEqual([...codes].sort());
    for (const code of codes) expect(renderErrorsReference()).toContain(`| \`${code}\` |`);
  });

  it('gives every code a meaning and an action', () => {
    for (const [code, info] of Object.entries(ERROR_TABLE)) {
      expect(info.meaning, code).not.toBe('');
      expect(info.action, code).not.toBe('');
    }
  });
});
