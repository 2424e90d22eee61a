import { describe, expect, it } from 'vitest';
import { redactCredentials } from './git-runner.js';

describe('redactCredentials', () => {
  it.each([
    ["fatal: unable to access 'https://bob:ghp_abc123@github.com/o/r.git/'", "fatal: unable to access 'https://***@github.com/o/r.git/'"],
    ['https://x-access-token:tok@host/r and ssh://git:pw@host:22/r', 'https://***@host/r and ssh://***@host:22/r'],
    ['https://github.com/o/r.git', 'https://github.com/o/r.git'],
    ['git@github.com:o/r.git', 'git@github.com:o/r.git'],
  ])('%s', (input, expected) => {
    expect(redactCredentials(input)).toBe(expected);
  });
});
