/** Steady load on a daemon: transfers back and forth and reservations, from a few concurrent submitters. */
import { request } from 'undici';

export interface Load {
  submitted: () => number;
  stop(): Promise<void>;
}

export function startLoad(url: string, token: string, legs: { a: string; b: string; asset: string }, concurrency = 3): Load {
  let running = true;
  let submitted = 0;
  const submit = async (worker: number) => {
    while (running) {
      const n = submitted++;
      const reserve = n % 10 === 0;
      const body = reserve
        ? { payer: legs.a, amount: '1', asset: legs.asset, reference: { load: n } }
        : { legs: [{ from: n % 2 === 0 ? legs.a : legs.b, to: n % 2 === 0 ? legs.b : legs.a, amount: '1', asset: legs.asset }], reference: { load: n } };
      try {
        const response = await request(`${url}${reserve ? '/v1/reservations' : '/v1/transfers'}`, {
          method: 'POST',
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'client-key': `load-${worker}-${n}` },
          body: JSON.stringify(body),
        });
        await response.body.dump();
      } catch {
        // The daemon restarting under the test: pause and go on.
        await new Promise((r) => setTimeout(r, 100));
      }
    }
  };
  const workers = Array.from({ length: concurrency }, (_, i) => submit(i));
  return {
    submitted: () => submitted,
    async stop() {
      running = false;
      await Promise.all(workers);
    },
  };
}
