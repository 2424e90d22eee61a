import { describe, expect, it } from 'vitest';
import { daemonStateText } from './daemon-liveness.js';
import type { DaemonStatus } from './status.js';

const daemon = (heartbeat?: DaemonStatus['heartbeat']): DaemonStatus => ({
  pid: 4242,
  startedAt: '2025-01-01T10:00:00.000Z',
  http: null,
  ready: true,
  lastSync: null,
  lastError: null,
  waitingFor: [],
  watches: [],
  ...(heartbeat === undefined ? {} : { heartbeat }),
});

describe('the daemon line of status', () => {
  it('running while it beats (or in the file of an older kbsync, which has no heartbeat); not answering for N s once it stops', () => {
    expect(daemonStateText(daemon())).toBe('running (pid 4242, since 2025-01-01T10:00:00.000Z), ready');
    expect(daemonStateText(daemon({ at: '2025-01-01T11:00:00.000Z', silentSeconds: 4, answering: true }))).toBe(
      'running (pid 4242, since 2025-01-01T10:00:00.000Z), ready',
    );
    const silent = daemonStateText(daemon({ at: '2025-01-01T11:00:00.000Z', silentSeconds: 42, answering: false }));
    expect(silent).toMatch(/^not answering for 42 s \(pid 4242, since 2025-01-01T10:00:00.000Z; last heartbeat 2025-01-01T11:00:00.000Z\)/);
    expect(silent).toContain('kill -CONT 4242');
  });
});
