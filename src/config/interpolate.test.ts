import { describe, expect, it } from 'vitest';
import { interpolate } from './interpolate.js';

describe('interpolate', () => {
  const env = { HOST: 'example.org', EMPTY: '', KEY: 's3cret' };

  it.each([
    ['plain text', 'plain text', []],
    ['https://${HOST}/api', 'https://example.org/api', ['HOST']],
    ['${HOST}${HOST}', 'example.orgexample.org', ['HOST', 'HOST']],
    ['${MISSING:-fallback}', 'fallback', ['MISSING']],
    ['${EMPTY:-fallback}', 'fallback', ['EMPTY']],
    ['${EMPTY}', '', ['EMPTY']],
    ['${HOST:-fallback}', 'example.org', ['HOST']],
    ['${MISSING:-}', '', ['MISSING']],
    ['${MISSING:-a:b-c d}', 'a:b-c d', ['MISSING']],
    ['$${HOST}', '${HOST}', []],
    ['cost: $5 and $$', 'cost: $5 and $$', []],
    ['$${HOST} is ${HOST}', '${HOST} is example.org', ['HOST']],
  ])('expands %j to %j', (text, value, variables) => {
    const result = interpolate(text, env);

    expect(result).toEqual({ value, variables, problems: [] });
  });

  it('reports an unset variable without a default, naming it', () => {
    const result = interpolate('key=${KBSYNC_API_KEY}', env);

    expect(result.problems).toEqual(['environment variable KBSYNC_API_KEY is not set (use ${KBSYNC_API_KEY:-default} for a default)']);
    expect(result.variables).toEqual(['KBSYNC_API_KEY']);
  });

  it.each([
    ['${1BAD}', /invalid variable reference "\$\{1BAD\}"/],
    ['${}', /invalid variable reference/],
    ['${A B}', /invalid variable reference/],
    ['${OPEN', /unterminated/],
  ])('reports a malformed reference %j', (text, message) => {
    const result = interpolate(text, env);

    expect(result.problems).toHaveLength(1);
    expect(result.problems[0]).toMatch(message);
  });

  it('never puts a variable value into a problem', () => {
    const result = interpolate('${KEY} ${NOPE}', env);

    expect(result.problems.join(' ')).not.toContain('s3cret');
  });
});
