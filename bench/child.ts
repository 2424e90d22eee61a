/**
 * Runs one benchmark function in this (fresh) process and prints its result as JSON on stdout:
 * `node .bench-build/bench/child.js <module.js> <exportedFunction> [json arguments...]`. An options
 * object argument gets `log`, writing progress to stderr. run.ts starts one child per benchmark, so
 * that no figure inherits another's heap, RSS or warm JIT.
 */
const [moduleFile, functionName, ...jsonArgs] = process.argv.slice(2);
if (moduleFile === undefined || functionName === undefined) throw new Error('usage: child.js <module.js> <function> [json args...]');
const mod = (await import(new URL(moduleFile, import.meta.url).href)) as Record<string, unknown>;
const fn = mod[functionName];
if (typeof fn !== 'function') throw new Error(`${moduleFile} exports no function ${functionName}`);
const log = (line: string): void => {
  process.stderr.write(`  ${line}\n`);
};
const args = jsonArgs.map((a) => {
  const value = JSON.parse(a) as unknown;
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? { ...value, log } : value;
});
const result: unknown = await (fn as (...a: unknown[]) => unknown)(...args);
process.stdout.write(`${JSON.stringify(result)}\n`);

export {};
