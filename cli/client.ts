/**
 * The one HTTP client of the CLI (over cli/transport.ts). Bounded timeouts; a connection failure
 * becomes exit 3, a refusal `{error, description}` exit 1.
 */
import type { Readable } from 'node:stream';
import type { ApiError, CommandReply } from './api.js';
import { RefusedError, UnreachableError, UsageError, exitCodes } from './errors.js';
import { clientKeyLengthMax, connectTimeoutMs, replyBytesMax } from './limits.js';
import { Transport } from './transport.js';

export type Query = Record<string, string | number | undefined>;

export interface CommandHeaders {
  clientKey?: string | undefined;
  onBehalfOf?: string | undefined;
}

/** Node's error codes that mean the service was not reached or stopped answering (ETIMEDOUT also a bound of cli/transport.ts). */
const unreachableCodes = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EPIPE',
  'ETIMEDOUT',
]);

export function isUnreachable(error: unknown): boolean {
  if (error instanceof UnreachableError) return true;
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code === 'string' && unreachableCodes.has(code)) return true;
  const cause = (error as { cause?: unknown } | null)?.cause;
  return cause !== undefined && cause !== error && isUnreachable(cause);
}

export class LedgerClient {
  private readonly transport: Transport;
  readonly baseUrl: URL;

  /**
   * `timeoutMs` bounds each request, from sending it to the last byte of its answer (`--timeout-ms`);
   * `deadlineAtMs` bounds them all together (the whole command's `--timeout-ms`, retries included).
   */
  constructor(
    baseUrl: string,
    private readonly token: string | undefined,
    readonly timeoutMs: number,
    readonly deadlineAtMs = Infinity,
  ) {
    this.transport = new Transport(Math.min(connectTimeoutMs, timeoutMs), timeoutMs);
    try {
      this.baseUrl = new URL(baseUrl);
    } catch {
      throw new UsageError(`not a URL: ${baseUrl}`);
    }
    if (this.baseUrl.protocol !== 'http:' && this.baseUrl.protocol !== 'https:') throw new UsageError(`not an http(s) URL: ${baseUrl}`);
  }

  /** What is left of the command's time for one more request or wait: never more than `timeoutMs`. */
  remainingMs(): number {
    return Math.min(this.timeoutMs, this.deadlineAtMs - Date.now());
  }

  /** The same service with no bound on the whole (a dashboard polls for as long as it runs); each request is still bounded. */
  withoutDeadline(): LedgerClient {
    return new LedgerClient(this.baseUrl.href, this.token, this.timeoutMs);
  }

  url(path: string, query: Query = {}): URL {
    const url = new URL(path, this.baseUrl);
    for (const [key, value] of Object.entries(query)) if (value !== undefined) url.searchParams.set(key, String(value));
    return url;
  }

  async get<T>(path: string, query: Query = {}): Promise<T> {
    return this.send<T>('GET', this.url(path, query), undefined, {});
  }

  /** A command (spec 4): `client-key` and `on-behalf-of` headers, a command reply back. */
  async command(path: string, body: unknown, headers: CommandHeaders = {}): Promise<CommandReply> {
    return (await this.commandTaken(path, body, headers)).reply;
  }

  /** A command, and whether the service answered it as a repeat under its client key (the `ledger-replay` header). */
  async commandTaken(path: string, body: unknown, headers: CommandHeaders = {}): Promise<{ reply: CommandReply; replayed: boolean }> {
    const answer = await this.exchange('POST', this.url(path), body, { ...commandHeaders(headers), accept: 'application/json' }, replyBytesMax);
    return { reply: parsed<CommandReply>(answer), replayed: answer.replayed };
  }

  /** A POST (a command, a batch of them, or one of the two /v1/auth routes) with the command headers given. */
  async post<T>(path: string, body: unknown, headers: CommandHeaders = {}): Promise<T> {
    return this.send<T>('POST', this.url(path), body, commandHeaders(headers));
  }

  /** An open event stream's body; the caller reads it until it ends or `signal` aborts. */
  stream(path: string, query: Query, signal: AbortSignal): Promise<Readable> {
    // An event stream is quiet between events: only the connection and the headers are bounded.
    return this.body(path, query, { accept: 'text/event-stream', bodyTimeout: 0, signal });
  }

  /** A large body (a backup), read as it arrives: each wait for more of it is bounded by `timeoutMs`, not the whole. */
  download(path: string, accept: string, query: Query = {}): Promise<Readable> {
    return this.body(path, query, { accept, bodyTimeout: this.timeoutMs, signal: undefined });
  }

  private async body(path: string, query: Query, options: { accept: string; bodyTimeout: number; signal: AbortSignal | undefined }): Promise<Readable> {
    const response = await this.call(() =>
      this.transport.request(this.url(path, query), { method: 'GET', headers: { ...this.auth(), accept: options.accept }, bodyTimeoutMs: options.bodyTimeout, signal: options.signal }),
    );
    if (response.statusCode >= 400) throw refusalOf(response.statusCode, response.headers['retry-after'], await this.call(() => this.textOf(response.body, replyBytesMax)));
    return response.body;
  }

  async close(): Promise<void> {
    this.transport.close();
  }

  private auth(): Record<string, string> {
    return this.token === undefined ? {} : { authorization: `Bearer ${this.token}` };
  }

  /** A GET answered with text, not JSON (ledgerd's `/metrics`): refused past `bytesMax` of body. */
  async getText(path: string, bytesMax: number): Promise<string> {
    return (await this.exchange('GET', this.url(path), undefined, { accept: 'text/plain' }, bytesMax)).text;
  }

  private async send<T>(method: 'GET' | 'POST', url: URL, body: unknown, extra: Record<string, string>): Promise<T> {
    return parsed<T>(await this.exchange(method, url, body, { ...extra, accept: 'application/json' }, replyBytesMax));
  }

  /** One request, bounded by `--timeout-ms` from sending it to the last byte; a refusal (status 400 and up) is thrown. */
  private async exchange(method: 'GET' | 'POST', url: URL, body: unknown, extra: Record<string, string>, bytesMax: number): Promise<Answer> {
    const headers: Record<string, string> = { ...this.auth(), ...extra };
    if (body !== undefined) headers['content-type'] = 'application/json';
    const noAnswer = () => new UnreachableError(`no answer from ${this.baseUrl.origin} within ${this.timeoutMs} ms (--timeout-ms)`);
    const allowedMs = this.remainingMs();
    if (allowedMs <= 0) throw noAnswer();
    const signal = AbortSignal.timeout(allowedMs);
    const bounded = <T>(run: () => Promise<T>) => this.call(run).catch((error: unknown) => {
      if (signal.aborted) throw noAnswer();
      throw error;
    });
    const response = await bounded(() => this.transport.request(url, { method, headers, signal, bodyTimeoutMs: this.timeoutMs, body: body === undefined ? undefined : JSON.stringify(body) }));
    const text = await bounded(() => this.textOf(response.body, bytesMax));
    if (response.statusCode >= 400) throw refusalOf(response.statusCode, response.headers['retry-after'], text);
    return { status: response.statusCode, text, replayed: response.headers['ledger-replay'] === 'true' };
  }

  /**
   * A body as text, refused once it passes `bytesMax` (the rest is not read): a service that
   * answers without end is broken or not a ledgerd, and cannot be used (exit 3).
   */
  private async textOf(body: Readable, bytesMax: number): Promise<string> {
    const chunks: Buffer[] = [];
    let bytes = 0;
    for await (const chunk of body as AsyncIterable<Buffer>) {
      bytes += chunk.length;
      if (bytes > bytesMax) {
        body.destroy();
        throw new UnreachableError(`${this.baseUrl.origin} answered more than ${bytesMax} bytes, the bound of one answer: not a ledgerd, or a broken one`);
      }
      chunks.push(chunk);
    }
    return Buffer.concat(chunks).toString('utf8');
  }

  private async call<T>(run: () => Promise<T>): Promise<T> {
    try {
      return await run();
    } catch (error) {
      // An abort is the caller's own (its signal says why), not the service's failure.
      if ((error as Error | null)?.name === 'AbortError' || error instanceof UnreachableError) throw error;
      if (isUnreachable(error)) throw new UnreachableError(`cannot reach ${this.baseUrl.origin}: ${describe(error)}`);
      throw error;
    }
  }
}

interface Answer {
  status: number;
  text: string;
  /** The service answered a repeat of an earlier command under its client key. */
  replayed: boolean;
}

function parsed<T>({ status, text }: Answer): T {
  try {
    return JSON.parse(text) as T;
  } catch {
    throw new RefusedError('ERR-Internal', `the service answered HTTP ${status} with a body that is not JSON`);
  }
}

function commandHeaders(headers: CommandHeaders): Record<string, string> {
  const extra: Record<string, string> = {};
  if (headers.clientKey !== undefined) {
    if (headers.clientKey.length === 0 || headers.clientKey.length > clientKeyLengthMax) throw new UsageError(`--client-key must be 1-${clientKeyLengthMax} characters`);
    extra['client-key'] = headers.clientKey;
  }
  if (headers.onBehalfOf !== undefined) extra['on-behalf-of'] = headers.onBehalfOf;
  return extra;
}

function describe(error: unknown): string {
  const code = (error as { code?: unknown }).code ?? (error as { cause?: { code?: unknown } }).cause?.code;
  const message = error instanceof Error ? error.message : String(error);
  return typeof code === 'string' && !message.includes(code) ? `${code} ${message}` : message;
}

/** A missing, unknown or expired token (401) has its own exit code: sign in again, not a business refusal. */
const exitCodeOf = (status: number) => (status === 401 ? exitCodes.unauthenticated : exitCodes.refused);

/** A refusal from its status and body; a body that is not `{error, description}` is named by its status. */
export function refusalOf(status: number, retryAfter: string | string[] | undefined, text: string): RefusedError {
  const retryAfterS = typeof retryAfter === 'string' && /^\d+$/.test(retryAfter) ? Number(retryAfter) : null;
  try {
    const body = JSON.parse(text) as Partial<ApiError>;
    if (typeof body.error === 'string') return new RefusedError(body.error, body.description ?? '', retryAfterS, exitCodeOf(status));
  } catch {
    // Not JSON: fall through to the status.
  }
  return new RefusedError(`HTTP-${status}`, text.trim().slice(0, 200) || 'the service refused without an error body', retryAfterS, exitCodeOf(status));
}
