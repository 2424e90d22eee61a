/** Past this depth a JSON subtree is written as compact JSON on one line instead of being flattened further. */
export const MAX_FLATTEN_DEPTH = 64;

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A scalar as text; newlines in strings are kept, but blank lines are collapsed (they separate records). */
export function scalarText(value: unknown): string {
  if (typeof value === 'string') return value.replace(/\r\n?/g, '\n').replace(/\n\s*\n/g, '\n');
  if (value === null) return 'null';
  if (value instanceof Date) return value.toISOString();
  return String(value);
}

function childPath(path: string, key: string): string {
  return path === '' ? key : `${path}.${key}`;
}

/**
 * A JSON value as `path: value` lines: `a.b[0].c: value`. Empty objects and arrays are written as
 * `{}` and `[]`; a bare scalar at the top is a single line with no `path: ` prefix.
 */
export function flattenJson(value: unknown, path = ''): string[] {
  const lines: string[] = [];
  const walk = (v: unknown, p: string, depth: number): void => {
    if (Array.isArray(v) || isPlainObject(v)) {
      const entries: [string, unknown][] = Array.isArray(v)
        ? v.map((item, i) => [`${p}[${i}]`, item])
        : Object.entries(v).map(([k, item]) => [childPath(p, k), item]);
      if (entries.length === 0) lines.push(`${p === '' ? '' : `${p}: `}${Array.isArray(v) ? '[]' : '{}'}`);
      else if (depth >= MAX_FLATTEN_DEPTH) lines.push(`${p}: ${JSON.stringify(v)}`);
      else for (const [childP, item] of entries) walk(item, childP, depth + 1);
      return;
    }
    lines.push(p === '' ? scalarText(v) : `${p}: ${scalarText(v)}`);
  };
  walk(value, path, 0);
  return lines;
}

/**
 * A parsed JSON document as records: each element of a top-level array is one record (paths
 * relative to the element); in a top-level object, each element of an array of objects is one
 * record (full path, `items[3].name: x`), and every other top-level key is one record.
 * Produced lazily, so a large document is flattened a batch at a time as the records are used.
 */
export function* jsonRecords(value: unknown): Generator<string> {
  if (Array.isArray(value)) {
    for (const item of value) yield flattenJson(item).join('\n');
    return;
  }
  if (!isPlainObject(value)) {
    yield flattenJson(value).join('\n');
    return;
  }
  let count = 0;
  for (const [key, item] of Object.entries(value)) {
    if (Array.isArray(item) && item.length > 0 && item.every(isPlainObject)) {
      for (let i = 0; i < item.length; i++) {
        count++;
        yield flattenJson(item[i], `${key}[${i}]`).join('\n');
      }
    } else {
      count++;
      yield flattenJson(item, key).join('\n');
    }
  }
  if (count === 0) yield '{}';
}
