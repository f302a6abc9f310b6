/**
 * A loopback TCP proxy a test puts between ledgerd and its database, to break the link
 * as networks do: `cut` resets every connection at once (a firewall's RST, a peer that
 * restarted), `blackhole` keeps them open but lets no byte through either way (a dead
 * link, a partition) until `heal`, which also lets new connections through again.
 */
import { type Server, type Socket, connect, createServer } from 'node:net';

export interface TcpProxy {
  readonly port: number;
  /** The URL `url` with its host and port replaced by the proxy's. */
  via(url: string): string;
  /** Resets every open connection (new ones still go through). */
  cut(): void;
  /** Stops forwarding on every connection, open and new, without closing any. */
  blackhole(): void;
  /** Forwards again: connections held by `blackhole` get the bytes they were sent meanwhile. */
  heal(): void;
  close(): Promise<void>;
}

export async function startTcpProxy(targetHost: string, targetPort: number): Promise<TcpProxy> {
  const pairs = new Set<[Socket, Socket]>();
  let holding = false;
  const held: Array<() => void> = [];

  const forward = (from: Socket, to: Socket) => {
    from.on('data', (chunk: Buffer) => {
      if (!holding) to.write(chunk);
      else held.push(() => to.write(chunk));
    });
  };
  const server: Server = createServer((inbound) => {
    const outbound = connect(targetPort, targetHost);
    const pair: [Socket, Socket] = [inbound, outbound];
    pairs.add(pair);
    const end = () => {
      pairs.delete(pair);
      inbound.destroy();
      outbound.destroy();
    };
    for (const s of pair) {
      s.on('error', end);
      s.on('close', end);
    }
    forward(inbound, outbound);
    forward(outbound, inbound);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : 0;
  return {
    port,
    via(url) {
      const u = new URL(url);
      u.hostname = '127.0.0.1';
      u.port = String(port);
      return u.toString();
    },
    cut() {
      for (const [inbound, outbound] of pairs) {
        inbound.resetAndDestroy();
        outbound.destroy();
      }
    },
    blackhole() {
      holding = true;
    },
    heal() {
      holding = false;
      for (const send of held.splice(0)) send();
    },
    async close() {
      for (const [inbound, outbound] of pairs) {
        inbound.destroy();
        outbound.destroy();
      }
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
