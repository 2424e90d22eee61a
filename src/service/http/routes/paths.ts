/** Path prefixes of the spec (v1: agents, datasets, files; v2: intelligence, agent-datasets, dataset update, webhooks). */
export const V1 = '/api/v1/ext';
export const V2 = '/api/v2/ext';
