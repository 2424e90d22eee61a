/**
 * The one way a test waits for something asynchronous it cannot be told about (a daemon's log, a
 * file processed in the background): polls `check` every 20 ms until it returns a value other than
 * false, null or undefined, and returns that value. After `timeoutMs` it fails naming `what` (a
 * function is called then, to describe the state it saw).
 */
export async function until<T>(
  what: string | (() => string),
  check: () => T | false | null | undefined | Promise<T | false | null | undefined>,
  timeoutMs = 30_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== false && value !== null && value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for: ${typeof what === 'string' ? what : what()}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
