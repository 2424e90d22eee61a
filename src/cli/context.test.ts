import { describe, expect, it } from 'vitest';
import { createContext } from './context.js';

describe("a command's logger (createContext)", () => {
  it('writes pretty lines to a terminal stderr, JSON lines to any other, as KBSYNC_LOG_FORMAT allows', async () => {
    const write = (isTTY: boolean, env: Record<string, string>): Promise<string> => {
      const chunks: string[] = [];
      const ctx = createContext({ stderr: { write: (t: string) => chunks.push(t), isTTY }, env });
      return ctx.getLogger().then((logger) => {
        logger.warn({ n: 1 }, 'took over a stale lock');
        return chunks.join('');
      });
    };

    expect(await write(true, {})).toMatch(/\u001b\[[0-9;]*mWARN\u001b\[[0-9;]*m.*took over a stale lock/);
    expect(JSON.parse(await write(false, {}))).toMatchObject({ level: 40, msg: 'took over a stale lock', n: 1 });
    expect(JSON.parse(await write(true, { KBSYNC_LOG_FORMAT: 'json' }))).toMatchObject({ level: 40, n: 1 });
  });
});
