import { afterAll, beforeAll } from 'vitest';
import { startE2eService, type E2eService } from './e2e-service.js';
import { createTempDirs } from './e2e-workspace.js';
import { startFaultProxy, type FaultProxy } from './fault-proxy.js';

/** What one end-to-end test file shares: the local service, a fault proxy in front of it (if asked), temp dirs. */
export type E2eSuite = {
  readonly svc: E2eService;
  readonly proxy: FaultProxy;
  readonly temp: ReturnType<typeof createTempDirs>;
};

/**
 * Starts the local service (and, with `proxy`, a fault proxy forwarding to it) before the file's tests
 * and stops them, and removes the temp dirs, after. `before` runs first (e.g. building dist/).
 */
export function useE2eSuite(o: { proxy?: boolean; before?: () => Promise<void>; timeoutMs?: number } = {}): E2eSuite {
  const temp = createTempDirs();
  let svc: E2eService | undefined;
  let proxy: FaultProxy | undefined;
  beforeAll(async () => {
    await o.before?.();
    svc = await startE2eService();
    if (o.proxy === true) proxy = await startFaultProxy(svc.url);
  }, o.timeoutMs);
  afterAll(async () => {
    await proxy?.close();
    await svc?.close();
    temp.cleanup();
  });
  return {
    get svc() {
      if (svc === undefined) throw new Error('the e2e service starts in beforeAll: use it inside tests or hooks');
      return svc;
    },
    get proxy() {
      if (proxy === undefined) throw new Error('no fault proxy: call useE2eSuite({ proxy: true })');
      return proxy;
    },
    temp,
  };
}
