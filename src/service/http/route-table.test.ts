import { describe, expect, it } from 'vitest';
import { createRouteTable } from './route-table.js';

function table() {
  const t = createRouteTable();
  t.add('/api/v1/ext/agents/', ['GET', 'HEAD']);
  t.add('/api/v1/ext/agents/', ['POST']);
  t.add('/api/v1/ext/agents/:agent', ['GET', 'HEAD']);
  t.add('/api/v1/ext/files/:id/reprocess', ['POST']);
  t.add('/api/v1/ext/files/search', ['DELETE']);
  return t;
}

describe('route table', () => {
  it('lists every route it was given, one row per method', () => {
    expect(table().routes()).toEqual([
      { method: 'GET', url: '/api/v1/ext/agents/' },
      { method: 'HEAD', url: '/api/v1/ext/agents/' },
      { method: 'POST', url: '/api/v1/ext/agents/' },
      { method: 'GET', url: '/api/v1/ext/agents/:agent' },
      { method: 'HEAD', url: '/api/v1/ext/agents/:agent' },
      { method: 'POST', url: '/api/v1/ext/files/:id/reprocess' },
      { method: 'DELETE', url: '/api/v1/ext/files/search' },
    ]);
  });

  it('answers 405 for a served path (with or without its trailing slash, query ignored), Allow without HEAD', () => {
    const t = table();
    for (const url of ['/api/v1/ext/agents/', '/api/v1/ext/agents', '/api/v1/ext/agents?x=1']) {
      const err = t.methodNotAllowed('DELETE', url);
      expect(err?.status, url).toBe(405);
      expect(err?.code).toBe('method_not_allowed');
      expect(err?.headers).toEqual({ allow: 'GET, POST' });
    }
    expect(t.methodNotAllowed('PUT', '/api/v1/ext/agents/7')?.headers).toEqual({ allow: 'GET' });
    expect(t.methodNotAllowed('GET', '/api/v1/ext/files/9/reprocess')?.headers).toEqual({ allow: 'POST' });
  });

  it('takes the most specific pattern: a static segment over a parameter', () => {
    const t = createRouteTable();
    t.add('/x/:id', ['GET']);
    t.add('/x/search', ['POST']);

    expect(t.methodNotAllowed('DELETE', '/x/search')?.headers).toEqual({ allow: 'POST' });
    expect(t.methodNotAllowed('DELETE', '/x/7')?.headers).toEqual({ allow: 'GET' });
  });

  it('leaves a 404 alone: an unknown path, an empty parameter, another method family (OPTIONS)', () => {
    const t = table();

    expect(t.methodNotAllowed('GET', '/api/v1/ext/nope')).toBeNull();
    expect(t.methodNotAllowed('PUT', '/api/v1/ext/files//reprocess')).toBeNull();
    expect(t.methodNotAllowed('OPTIONS', '/api/v1/ext/agents/')).toBeNull();
    expect(t.methodNotAllowed('GET', '/api/v1/ext/agents/7/extra')).toBeNull();
  });
});
