import { describe, expect, it } from 'vitest';
import { isKbsyncError } from '../../src/shared/errors.js';
import { DEFAULT_EMBEDDINGS_MODEL, embeddingsFromEnv } from '../../src/cli/serve-options.js';

const usage = (env: NodeJS.ProcessEnv): string => {
  try {
    embeddingsFromEnv(env);
  } catch (err) {
    if (isKbsyncError(err, 'usage')) return err.message;
    throw err;
  }
  throw new Error('no usage error');
};

describe('kbsync serve: the embeddings provider from the environment', () => {
  it('reads URL, model and key; the model defaults; without a URL there is no provider', () => {
    expect(embeddingsFromEnv({})).toBeUndefined();
    expect(embeddingsFromEnv({ KBSYNC_EMBEDDINGS_URL: 'http://127.0.0.1:11434/v1' })).toEqual({
      url: 'http://127.0.0.1:11434/v1',
      model: DEFAULT_EMBEDDINGS_MODEL,
    });
    expect(
      embeddingsFromEnv({
        KBSYNC_EMBEDDINGS_URL: 'https://e.example/v1/embeddings',
        KBSYNC_EMBEDDINGS_MODEL: 'nomic-embed-text',
        KBSYNC_EMBEDDINGS_API_KEY: 'sk-1',
      }),
    ).toEqual({ url: 'https://e.example/v1/embeddings', model: 'nomic-embed-text', apiKey: 'sk-1' });
  });

  it('refuses a bad URL, and a model or key without a URL, naming the variable', () => {
    expect(usage({ KBSYNC_EMBEDDINGS_URL: 'not a url' })).toContain('KBSYNC_EMBEDDINGS_URL');
    expect(usage({ KBSYNC_EMBEDDINGS_URL: 'ftp://h/v1' })).toContain('got "ftp:"');
    expect(usage({ KBSYNC_EMBEDDINGS_API_KEY: 'sk-1' })).toContain('without KBSYNC_EMBEDDINGS_URL');
  });
});
