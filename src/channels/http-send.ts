import { ChannelError } from './channel.ts';

/** What a provider answered: the status and the parsed JSON body (null when it was not JSON). */
export interface ProviderAnswer {
  status: number;
  body: unknown;
}

/**
 * One request to a provider's REST API with a timeout. A network failure or timeout is a
 * retryable `ChannelError`; any HTTP answer is returned for the channel to judge.
 */
export async function callProvider(
  doFetch: typeof fetch,
  url: string,
  init: RequestInit & { timeoutMs: number; signal?: AbortSignal | undefined },
  provider: string,
): Promise<ProviderAnswer> {
  const timeout = AbortSignal.timeout(init.timeoutMs);
  let response: Response;
  try {
    response = await doFetch(url, { ...init, signal: init.signal ? AbortSignal.any([init.signal, timeout]) : timeout });
  } catch (error) {
    throw new ChannelError(`${provider} unreachable: ${(error as Error).message}`, { retryable: true, cause: error });
  }
  const text = await response.text().catch(() => '');
  return { status: response.status, body: parseOrNull(text) };
}

function parseOrNull(text: string): unknown {
  try {
    return text ? JSON.parse(text) : null;
  } catch {
    return null;
  }
}

/** 408, 429 and 5xx may pass if tried again; other 4xx will not. */
export function retryableStatus(status: number): boolean {
  return status === 408 || status === 429 || status >= 500;
}
