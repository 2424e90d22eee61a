/** The knowledge-service client: the only door to HTTP on the sync side. */
export { createClient } from './client.js';
export { ApiError, isApiError } from './errors.js';
export { DEFAULT_DIALECT, DEFAULT_TIMEOUTS } from './http.js';
export { DEFAULT_RETRY } from './retry.js';
export { signWebhook, verifyHmacSignature, verifyWebhook, WEBHOOK_TOLERANCE_SEC } from './webhook-verify.js';
export type { VerifyFailure, VerifyHmacInput, VerifyResult, VerifyWebhookInput, WebhookHeaders } from './webhook-verify.js';
export type * from './types.js';
