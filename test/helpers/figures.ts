/**
 * Prints one line of what a reliability test measured, e.g.
 * `figures | killed during an upload: kills landed 1, duplicate charges 0`. docs/reliability.md quotes
 * these lines; `npx vitest run FILE -t TITLE` shows them (vitest prints a test's console output).
 */
export function printFigures(title: string, figures: Record<string, number | string>): void {
  const line = Object.entries(figures)
    .map(([name, value]) => `${name} ${value}`)
    .join(', ');
  console.log(`figures | ${title}: ${line}`);
}
