import { describe, expect, it } from 'vitest';
import { createRouteTable } from './route-table.js';

function table() {
  const t = createRouteTable<string>();
  t.add('/api/v1/ext/agents/', ['GET', 'HEAD'], 'list agents');
  t.add('/api/v1/ext/agents/', ['POST'], 'create agent');
  t.add('/api/v1/ext/agents/:agent', ['GET', 'HEAD'], 'get agent');
  t.add('/api/v1/ext/files/:id/reprocess', ['POST'], 'reprocess');
  t.add('/api/v1/ext/files/search', ['DELETE'], 'delete search');
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
    const t = createRouteTable<string>();
    t.add('/x/:id', ['GET'], 'by id');
    t.add('/x/search', ['POST'], 'search');

    expect(t.methodNotAllowed('DELETE', '/x/search')?.headers).toEqual({ allow: 'POST' });
    expect(t.methodNotAllowed('DELETE', '/x/7')?.headers).toEqual({ allow: 'GET' });
    expect(t.find('POST', '/x/search')?.value).toBe('search');
    expect(t.find('GET', '/x/search')).toBeNull();
    expect(t.find('GET', '/x/7')).toEqual({ value: 'by id', params: { id: '7' } });
  });

  it('finds a route with or without its trailing slash, query ignored, parameters percent-decoded', () => {
    const t = table();

    expect(t.find('GET', '/api/v1/ext/agents')?.value).toBe('list agents');
    expect(t.find('POST', '/api/v1/ext/agents/?x=1')?.value).toBe('create agent');
    expect(t.find('HEAD', '/api/v1/ext/agents/12/')).toEqual({ value: 'get agent', params: { agent: '12' } });
    expect(t.find('POST', '/api/v1/ext/files/a%20b/reprocess?y=2')).toEqual({ value: 'reprocess', params: { id: 'a b' } });
    expect(t.find('GET', '/api/v1/ext/agents/7/extra')).toBeNull();
    expect(t.find('GET', '/API/v1/ext/agents/')).toBeNull();
  });

  it('answers 400 for a parameter that is not valid percent-encoding', () => {
    expect(() => table().find('GET', '/api/v1/ext/agents/%E0%A4%A')).toThrow(/malformed URL/);
  });

  it('leaves a 404 alone: an unknown path, an empty parameter, another method family (OPTIONS)', () => {
    const t = table();

    expect(t.methodNotAllowed('GET', '/api/v1/ext/nope')).toBeNull();
    expect(t.methodNotAllowed('PUT', '/api/v1/ext/files//reprocess')).toBeNull();
    expect(t.methodNotAllowed('OPTIONS', '/api/v1/ext/agents/')).toBeNull();
    expect(t.methodNotAllowed('GET', '/api/v1/ext/agents/7/extra')).toBeNull();
  });
});
