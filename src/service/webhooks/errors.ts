import { KbsyncError } from '../../shared/errors.js';

/** The codes webhook rules raise; the HTTP layer maps them: 422, 409, 404. */
export type WebhookErrorCode = 'validation_failed' | 'limit_reached' | 'not_found';

/** A webhook request the rules refuse (bad URL or events, 11th webhook, unknown webhook). */
export class WebhookError extends KbsyncError {
  declare readonly code: WebhookErrorCode;

  constructor(code: WebhookErrorCode, message: string, options?: { cause?: unknown }) {
    super(code, message, options);
    this.name = 'WebhookError';
  }
}
