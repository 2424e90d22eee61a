import type { FaultProxy, ProxiedRequest } from './fault-proxy.js';
import { killHard, spawnKbsync, type ChildExit } from './kbsync-child.js';

/**
 * Where a run is SIGKILLed: at the `nth` request that matches `sent` (cut off on its way to the service) or
 * `answered` (the service answered it, the answer is lost); one count for both.
 */
export type KillAt = { nth: number; sent?: (req: ProxiedRequest) => boolean; answered?: (req: ProxiedRequest) => boolean };

/**
 * Runs `kbsync sync --json` of a workspace as a child through the fault proxy, SIGKILLed where `at` says (nothing
 * reaches the service after the kill); returns its exit and whether the kill landed. The proxy forwards all again after.
 */
export async function syncKilledAt(
  proxy: FaultProxy,
  ws: { configPath: string; root: string },
  at: KillAt,
): Promise<{ exit: ChildExit; killed: boolean }> {
  let seen = 0;
  let killed = false;
  const k = spawnKbsync(['sync', '--json', '-c', ws.configPath], ws.root);
  const kill = async (): Promise<void> => {
    killed = true;
    await killHard(k);
  };
  proxy.setHooks({
    onRequest: async (req) => {
      if (killed) return { kind: 'drop' };
      if (at.sent?.(req) === true && ++seen === at.nth) {
        await kill();
        return { kind: 'drop' };
      }
      return { kind: 'forward' };
    },
    onResponse: async (req) => {
      if (killed) return 'drop';
      if (at.answered?.(req) === true && ++seen === at.nth) {
        await kill();
        return 'drop';
      }
      return 'relay';
    },
  });
  const exit = await k.exited;
  proxy.setHooks({});
  return { exit, killed };
}
