/**
 * One HTTP request over Node's own `node:http` (or `node:https`), with the bounds the client
 * needs: connecting, waiting for the answer's headers, and each wait for more of its body. Not
 * undici: loading it and compiling its WebAssembly parser was most of a short command's start
 * (docs/performance.md, "ledgerctl start-up"), and Node's parser is built in.
 */
import type { Agent, IncomingHttpHeaders, IncomingMessage } from 'node:http';

export interface Reply {
  readonly statusCode: number;
  readonly headers: IncomingHttpHeaders;
  readonly body: IncomingMessage;
}

export interface RequestOptions {
  readonly method: 'GET' | 'POST';
  readonly headers: Record<string, string>;
  readonly body?: string | undefined;
  readonly signal?: AbortSignal | undefined;
  /** Bound of each quiet spell while the answer's body arrives; 0: none (an event stream is quiet between events). */
  readonly bodyTimeoutMs: number;
}

/** A bound passed: its code is one `isUnreachable` knows (the service stopped answering). */
export class TimeoutError extends Error {
  readonly code = 'ETIMEDOUT';
}

export class Transport {
  private agent: Agent | undefined;

  /** `headersTimeoutMs` bounds the wait from sending a request to its answer's headers. */
  constructor(
    private readonly connectTimeoutMs: number,
    private readonly headersTimeoutMs: number,
  ) {}

  async request(url: URL, options: RequestOptions): Promise<Reply> {
    // Loaded by the first request, not at start (`--version`, help and completion make none); TLS only for an https service.
    const transport = url.protocol === 'https:' ? await import('node:https') : await import('node:http');
    this.agent ??= new transport.Agent({ keepAlive: true });
    const headers = options.body === undefined ? options.headers : { ...options.headers, 'content-length': String(Buffer.byteLength(options.body)) };
    return new Promise((resolve, reject) => {
      const req = transport.request(url, { method: options.method, headers, agent: this.agent, signal: options.signal });
      let response: IncomingMessage | null = null;
      let connectTimer: NodeJS.Timeout | undefined;
      req.once('socket', (socket) => {
        if (!socket.connecting) return;
        connectTimer = setTimeout(() => req.destroy(new TimeoutError(`could not connect within ${this.connectTimeoutMs} ms`)), this.connectTimeoutMs);
        socket.once('connect', () => clearTimeout(connectTimer));
      });
      // The socket's idle bound: until the headers, then the body's (the last error wins where it is read).
      req.setTimeout(this.headersTimeoutMs, () => {
        if (response === null) req.destroy(new TimeoutError(`no answer within ${this.headersTimeoutMs} ms`));
        else response.destroy(new TimeoutError(`the answer stopped for ${options.bodyTimeoutMs} ms`));
      });
      req.once('response', (res) => {
        response = res;
        clearTimeout(connectTimer);
        req.setTimeout(options.bodyTimeoutMs);
        resolve({ statusCode: res.statusCode ?? 0, headers: res.headers, body: res });
      });
      // `on`, not `once`: a socket may fail again after the answer came (its body's reader sees that).
      req.on('error', (error) => {
        clearTimeout(connectTimer);
        reject(error);
      });
      req.end(options.body);
    });
  }

  close(): void {
    this.agent?.destroy();
  }
}
