import type { KnowledgeClient } from '../client/index.js';
import { KbsyncError } from '../shared/errors.js';
import type { Logger } from '../shared/logger.js';
import type { ResolvedConfig } from '../config/schema.js';

/**
 * A client for the configured dataset, and how to let go of it (and of the embedded service).
 * `embedded` is set for the embedded target: its data folder (absolute) and dataset id.
 */
export type OpenTarget = {
  client: KnowledgeClient;
  datasetId: string | null;
  embedded: { dataDir: string; datasetId: string } | null;
  close(): Promise<void>;
};

/**
 * Connects to `config.target`: a remote service through the client, or the embedded service
 * started in-process (127.0.0.1, random port) and reached through the same client over HTTP.
 * The client and the service are imported here, on first use, so commands that never open a
 * target (`--help`, `init`, `config check`) do not load them. `background: false` (a command that
 * uploads nothing) starts the embedded service without its processing worker and webhook sender: the
 * files it did not receive are a running daemon's service's to process, not taken up by a command that ends soon.
 */
export async function openTarget(config: ResolvedConfig, logger: Logger, o: { background?: boolean } = {}): Promise<OpenTarget> {
  const { createClient } = await import('../client/index.js');
  const { target } = config;
  const retry = { maxRetryAfterMs: config.upload.maxRetryAfterSeconds * 1000 };
  if (target.kind === 'remote') {
    if (target.baseUrl === undefined || target.apiKey === undefined) {
      // loadConfig guarantees both for a remote target; a hand-built config may not.
      throw new KbsyncError('config_invalid', 'target.kind is remote but target.baseUrl or the API key is missing');
    }
    const client = createClient({
      baseUrl: target.baseUrl,
      apiKey: target.apiKey,
      datasetId: target.datasetId,
      dialect: target.dialect,
      logger,
      retry,
    });
    return { client, datasetId: target.datasetId ?? null, embedded: null, close: () => client.close() };
  }
  const { startEmbeddedService } = await import('../service/embedded.js');
  const service = await startEmbeddedService({
    dataDir: target.dataDir,
    plan: target.plan,
    credits: target.startCredits,
    logger,
    background: o.background,
  });
  // The embedded service speaks the published API, so the user's remote dialect does not apply.
  const client = createClient({ baseUrl: service.baseUrl, apiKey: service.apiKey, datasetId: service.datasetId, logger, retry });
  return {
    client,
    datasetId: service.datasetId,
    embedded: { dataDir: target.dataDir, datasetId: service.datasetId },
    close: async () => {
      try {
        await client.close();
      } finally {
        await service.close();
      }
    },
  };
}

/** The command that adds `credits` to the embedded dataset (its data folder quoted for a POSIX shell when it needs it). */
export function creditsAddCommand(embedded: { dataDir: string; datasetId: string }, credits: number): string {
  return `kbsync serve credits add --data ${shellWord(embedded.dataDir)} --dataset ${shellWord(embedded.datasetId)} ${credits}`;
}

function shellWord(word: string): string {
  return /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replaceAll("'", `'\\''`)}'`;
}
