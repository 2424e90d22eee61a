import type { ResultOrigin } from '../client/types.js';

/**
 * Where a query result or chat source came from, for the human output: `  from "Install > Linux", rows 2-41`
 * (a space-led suffix), or '' when the service told none (the hosted service never does).
 */
export function originLabel(origin: ResultOrigin | undefined): string {
  if (origin === undefined) return '';
  const parts: string[] = [];
  if (origin.heading !== null && origin.heading !== '') parts.push(`from ${JSON.stringify(origin.heading)}`);
  if (origin.firstRow !== null) {
    const last = origin.lastRow ?? origin.firstRow;
    parts.push(last === origin.firstRow ? `row ${origin.firstRow}` : `rows ${origin.firstRow}-${last}`);
  }
  return parts.length === 0 ? '' : `  ${parts.join(', ')}`;
}
