import { readFileSync, writeFileSync } from 'node:fs';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { renderConfigReference } from './reference.js';
import { Config } from './schema.js';
import { defOf, shapeOf, unwrap } from './schema-walk.js';

const DOC = new URL('../../docs/config.md', import.meta.url);
const SCHEMA_SOURCES = [new URL('./schema.ts', import.meta.url), new URL('./limits-schema.ts', import.meta.url)];

/**
 * The keys of a schema source that call `.describe()`, as written: name and line, and whether a
 * TSDoc comment (a second copy of the description, which would drift from the first) sits above it.
 */
function describedKeys(file: URL): { name: string; tsdoc: boolean }[] {
  const text = readFileSync(file, 'utf8');
  const sf = ts.createSourceFile(file.pathname, text, ts.ScriptTarget.Latest, true);
  const out: { name: string; tsdoc: boolean }[] = [];
  const describes = (node: ts.Node): boolean =>
    (ts.isCallExpression(node) && ts.isPropertyAccessExpression(node.expression) && node.expression.name.text === 'describe') ||
    (ts.forEachChild(node, (child) => describes(child) || undefined) ?? false);
  const visit = (node: ts.Node): void => {
    if (ts.isPropertyAssignment(node) && describes(node.initializer)) {
      const comments = ts.getLeadingCommentRanges(text, node.getFullStart()) ?? [];
      const line = sf.getLineAndCharacterOfPosition(node.getStart()).line + 1;
      out.push({
        name: `${file.pathname.split('/').at(-1)}:${line} ${node.name.getText()}`,
        tsdoc: comments.some((c) => text.startsWith('/**', c.pos)),
      });
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return out;
}

/** Every field of the schema, with its dotted path and description. */
function fields(): { path: string; description: string | undefined }[] {
  const out: { path: string; description: string | undefined }[] = [];
  const walk = (schema: Parameters<typeof shapeOf>[0], prefix: string): void => {
    for (const [key, field] of Object.entries(shapeOf(schema) ?? {})) {
      const path = prefix === '' ? key : `${prefix}.${key}`;
      out.push({ path, description: (field as { description?: string }).description });
      const inner = unwrap(field);
      const def = defOf(inner);
      if (def.type === 'object') walk(inner, path);
      if (def.type === 'array') walk(def.element as typeof inner, `${path}[]`);
    }
  };
  walk(Config, '');
  return out;
}

describe('docs/config.md', () => {
  it('is exactly what renderConfigReference() builds from the schema', () => {
    const rendered = renderConfigReference();
    if (process.env.KBSYNC_UPDATE_DOCS === '1') writeFileSync(DOC, rendered);

    expect(readFileSync(DOC, 'utf8')).toEqual(rendered);
  });

  it('documents every field of the schema with a description, a type and a default column', () => {
    const rendered = renderConfigReference();

    for (const field of fields()) {
      expect(field.description, field.path).toBeTruthy();
      expect(rendered).toMatch(
        new RegExp(`^\\| \`${field.path.replaceAll('[', '\\[').replaceAll(']', '\\]')}\` \\| [^|]+ \\| [^|]+ \\| .+ \\|$`, 'm'),
      );
    }
    expect(fields().length).toBeGreaterThan(30);
  });

  it('has one description per key: its .describe() text, no TSDoc beside it in schema.ts or limits-schema.ts', () => {
    const described = SCHEMA_SOURCES.flatMap((file) => describedKeys(file));

    expect(described.length).toBe(fields().length);
    expect(described.filter((key) => key.tsdoc).map((key) => key.name)).toEqual([]);
  });

  it.each([
    ['`upload.concurrency` | integer ≥ 1, ≤ 64 | `4`'],
    ['`limits.maxFileBytes` | integer ≥ 1 or null | `null`'],
    ['`target.baseUrl` | URL (http or https) | —'],
    ['`target.kind` | `embedded`, `remote` | `embedded`'],
    ['`sources[].name` | string matching `^[A-Za-z0-9._-]+$` | required'],
    ['`target.datasetId` | string or integer ≥ 1 | —'],
  ])('renders %s', (row) => {
    expect(renderConfigReference()).toContain(row);
  });
});
