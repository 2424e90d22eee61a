import { agentDatasetMethods } from './agent-datasets.js';
import { agentMethods } from './agents.js';
import { datasetMethods } from './datasets.js';
import { fileMethods } from './files.js';
import { createHttp } from './http.js';
import { intelligenceMethods } from './intelligence.js';
import type { ClientOptions, KnowledgeClient } from './types.js';
import { webhookMethods } from './webhooks.js';

/** A client for all 22 endpoints of the knowledge service, speaking the configured dialect. */
export function createClient(opts: ClientOptions): KnowledgeClient {
  const http = createHttp(opts);
  return {
    ...datasetMethods(http, opts.datasetId),
    ...fileMethods(http, opts.logger),
    ...agentMethods(http),
    ...intelligenceMethods(http),
    ...agentDatasetMethods(http),
    ...webhookMethods(http),
    close: () => http.close(),
  };
}
