import type { Dispatcher } from 'undici';
import { signWebhook } from '../../shared/webhooks.js';

/** How one POST ended. `aborted` means the sender was stopped: not an attempt, nothing to record. */
export type SendOutcome =
  | { kind: 'delivered'; status: number; error: null }
  | { kind: 'rejected'; status: number; error: string }
  | { kind: 'timeout' | 'network' | 'aborted'; status: null; error: string };

export type SendOptions = { dispatcher: Dispatcher; timeoutMs: number; timestampSec: number; signal: AbortSignal };

/** The headers of one attempt; the timestamp (and so the signature) is fresh at each attempt. */
export function deliveryHeaders(secret: string, eventId: string, timestampSec: number, body: string): Record<string, string> {
  return {
    'content-type': 'application/json',
    'user-agent': 'kbsync-local-service',
    'webhook-id': eventId,
    'webhook-timestamp': String(timestampSec),
    'webhook-signature': signWebhook(secret, eventId, timestampSec, body),
  };
}

/**
 * POSTs one signed delivery; never throws. 2xx is `delivered`; any other status (redirects are not
 * followed) is `rejected`; the whole exchange, body included, must finish within `timeoutMs`.
 */
export async function sendDelivery(
  target: { url: string; secret: string },
  eventId: string,
  body: string,
  options: SendOptions,
): Promise<SendOutcome> {
  const deadline = AbortSignal.timeout(options.timeoutMs);
  const signal = AbortSignal.any([deadline, options.signal]);
  try {
    // Loaded here, not at the service's start (the module is cached after the first delivery).
    const { request } = await import('undici');
    const response = await request(target.url, {
      method: 'POST',
      headers: deliveryHeaders(target.secret, eventId, options.timestampSec, body),
      body,
      dispatcher: options.dispatcher,
      signal,
      headersTimeout: options.timeoutMs,
      bodyTimeout: options.timeoutMs,
    });
    await response.body.dump({ limit: 64 * 1024, signal });
    const status = response.statusCode;
    return status >= 200 && status < 300
      ? { kind: 'delivered', status, error: null }
      : { kind: 'rejected', status, error: `HTTP ${status}` };
  } catch (err) {
    return classifyFailure(err, deadline, options.signal);
  }
}

/** Turns a transport failure into an outcome; the one place that reads undici error codes. */
function classifyFailure(err: unknown, deadline: AbortSignal, stop: AbortSignal): SendOutcome {
  if (stop.aborted) return { kind: 'aborted', status: null, error: 'sender stopped' };
  const code = errorCode(err) ?? errorCode((err as { cause?: unknown } | null)?.cause);
  if (deadline.aborted || (code !== null && code.endsWith('TIMEOUT'))) {
    return { kind: 'timeout', status: null, error: 'timeout' };
  }
  return { kind: 'network', status: null, error: code === null ? 'network error' : `network error ${code}` };
}

function errorCode(err: unknown): string | null {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : null;
}
