import type { IncomingMessage } from 'node:http';
import { describe, expect, it } from 'vitest';
import { createPageAccess, isLoopback } from './access.js';

const req = (headers: Record<string, string>): IncomingMessage => ({ headers }) as unknown as IncomingMessage;
const TOKEN = 'a-token-of-24-characters';

describe('the status page access rules', () => {
  it('on loopback without a token: open to a loopback Host only (no DNS rebinding)', () => {
    const a = createPageAccess({ host: '127.0.0.1', token: null, port: () => 9464 });

    expect(a.tokenRequired).toBe(false);
    for (const host of ['127.0.0.1:9464', 'localhost:9464', '[::1]:9464']) expect(a.refusal(req({ host }))).toBeNull();
    expect(a.refusal(req({ host: 'evil.example:9464' }))?.status).toBe(403);
    expect(a.refusal(req({ host: '127.0.0.1:80' }))?.status).toBe(403);
    expect(a.refusal(req({}))?.status).toBe(403);
  });

  it('off loopback: the token (Bearer or the session cookie), else 401; without a token configured, 401 always', () => {
    const a = createPageAccess({ host: '0.0.0.0', token: TOKEN, port: () => 9464 });

    expect(a.refusal(req({ host: 'box:9464' }))?.status).toBe(401);
    expect(a.refusal(req({ host: 'box:9464', authorization: 'Bearer wrong' }))?.status).toBe(401);
    expect(a.refusal(req({ host: 'box:9464', authorization: `Bearer ${TOKEN}` }))).toBeNull();
    expect(a.refusal(req({ host: 'box:9464', cookie: `other=1; kbsync_session=${a.sessionValue}` }))).toBeNull();
    expect(a.sessionValue).not.toContain(TOKEN);

    const none = createPageAccess({ host: '0.0.0.0', token: null, port: () => 9464 });
    expect(none.noToken).toBe(true);
    expect(none.refusal(req({ host: 'box:9464', authorization: 'Bearer ' }))?.status).toBe(401);
  });

  it('a POST needs the token, or the CSRF token as JSON from the same origin', () => {
    const a = createPageAccess({ host: '127.0.0.1', token: null, port: () => 9464 });
    const page = { host: '127.0.0.1:9464', 'content-type': 'application/json', 'x-kbsync-csrf': a.csrf };

    expect(a.postAllowed(req(page))).toBe(true);
    expect(a.postAllowed(req({ ...page, origin: 'http://127.0.0.1:9464', 'sec-fetch-site': 'same-origin' }))).toBe(true);
    expect(a.postAllowed(req({ ...page, 'x-kbsync-csrf': 'guess' }))).toBe(false);
    expect(a.postAllowed(req({ ...page, origin: 'http://evil.example' }))).toBe(false);
    expect(a.postAllowed(req({ ...page, origin: 'null' }))).toBe(false);
    expect(a.postAllowed(req({ ...page, 'sec-fetch-site': 'cross-site' }))).toBe(false);
    expect(a.postAllowed(req({ ...page, 'content-type': 'text/plain' }))).toBe(false);
    const withToken = createPageAccess({ host: '0.0.0.0', token: TOKEN, port: () => 9464 });
    expect(withToken.postAllowed(req({ authorization: `Bearer ${TOKEN}` }))).toBe(true);
  });

  it('knows loopback addresses', () => {
    expect(['127.0.0.1', '127.1.2.3', '::1', 'localhost'].map(isLoopback)).toEqual([true, true, true, true]);
    expect(['0.0.0.0', '192.168.1.2', '::', 'example.com'].map(isLoopback)).toEqual([false, false, false, false]);
  });
});
