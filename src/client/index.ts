/** The knowledge-service client: the only door to HTTP on the sync side. */
export { createClient } from './client.js';
export { isApiError } from './errors.js';
export { verifyWebhook } from './webhook-verify.js';
export type * from './types.js';
