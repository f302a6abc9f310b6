/**
 * The README runbook's API calls through a typed client: `paths` is what openapi-typescript
 * generated from a running ledgerd's /v1/openapi.json (into ./schema.d.ts, beside this file
 * in a temp dir), and openapi-fetch makes the calls. test/daemon/openapi-client.test.ts
 * type-checks this file against those types with tsc, then runs it against the daemon:
 *
 *   node runbook.js BASE_URL OPERATOR_KEY IDENTITIES_KEY   # prints one JSON object
 *
 * It is not part of the project's build: its types exist only once a document was generated.
 */
import createClient from 'openapi-fetch';
import type { components, paths } from './schema.js';

type Api = ReturnType<typeof createClient<paths>>;
type Refusal = components['schemas']['Refusal'];

function connect(baseUrl: string, token: string): Api {
  // GET /v1/movements takes `of: {account} | {identity}` as form-exploded (`?account=...`), as the document says.
  return createClient<paths>({ baseUrl, headers: { authorization: `Bearer ${token}` }, querySerializer: { object: { style: 'form', explode: true } } });
}

/** The value of a call that succeeded; a refusal (the document's `{error, description}`) throws. */
function ok<T>(call: { data?: T; error?: Refusal; response: Response }): T {
  if (call.data === undefined) throw new Error(`${call.response.status} ${call.error?.error ?? ''}: ${call.error?.description ?? ''}`);
  return call.data;
}

type OperationView = paths['/v1/operations/{operation_reference}']['get']['responses'][200]['content']['application/json'];

/** Waits for the decision of a command the daemon acknowledged; its result once Completed. */
async function completed(api: Api, acknowledged: { operation_reference: string }): Promise<OperationView['result']> {
  for (let attempt = 0; attempt < 500; attempt++) {
    const view = ok(await api.GET('/v1/operations/{operation_reference}', { params: { path: { operation_reference: acknowledged.operation_reference } } }));
    if (view.terminal) {
      if (view.state !== 'Completed') throw new Error(`operation ${view.operation_reference} ${view.state}: ${view.error?.error ?? ''}`);
      return view.result;
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error(`operation ${acknowledged.operation_reference} was not decided`);
}

function need<T>(value: T | null | undefined, what: string): T {
  if (value === null || value === undefined) throw new Error(`no ${what}`);
  return value;
}

export async function runbook(baseUrl: string, operatorKey: string, identitiesKey: string) {
  const operator = connect(baseUrl, operatorKey);
  const identities = connect(baseUrl, identitiesKey);

  // ledgerctl --profile identities identities create --scheme api-key --save-as alice|bob
  const createIdentity = async (clientKey: string) => {
    const reply = ok(await identities.POST('/v1/identities', { params: { header: { 'client-key': clientKey } }, body: { scheme: 'api-key' } }));
    const result = await completed(identities, reply);
    return { identity: need(result?.identity, 'identity'), apiKey: need(reply.api_key, 'api key') };
  };
  const alice = await createIdentity('create-alice');
  const bob = await createIdentity('create-bob');

  // ledgerctl --profile identities accounts open --owner ...
  const openAccount = async (owner: string, clientKey: string) => {
    const reply = ok(await identities.POST('/v1/accounts', { params: { header: { 'client-key': clientKey } }, body: { owner, kind: 'customer', custody: 'delegated' } }));
    return need((await completed(identities, reply))?.account, 'account');
  };
  const aliceUsd = await openAccount(alice.identity, 'open-alice');
  const bobUsd = await openAccount(bob.identity, 'open-bob');

  // The alias `treasury:USD`, as ledgerctl resolves a flag that names one.
  const treasuryUsd = ok(await operator.GET('/v1/aliases', { params: { query: { source: 'ledger', name: 'treasury:USD' } } })).account;

  // ledgerctl ops issuance-grant --principal did:ledger:id:operator --subject-account treasury:USD --ops transfer --per-operation 1000000
  const floatGrant = ok(
    await operator.POST('/v1/ops/issuance-grants', {
      params: { header: { 'client-key': 'float-grant' } },
      body: {
        grant: { kind: 'issuance', principal: 'did:ledger:id:operator', subject: { account: treasuryUsd }, ops: ['transfer'], per_operation: '1000000' },
        justification: 'opening float',
      },
    }),
  );
  await completed(operator, floatGrant);

  // ledgerctl transfers create --from treasury:USD --to $ALICE_USD --amount 50000 --asset USD
  const issue = ok(
    await operator.POST('/v1/transfers', { params: { header: { 'client-key': 'issue-1' } }, body: { legs: [{ from: treasuryUsd, to: aliceUsd, amount: '50000', asset: 'USD' }] } }),
  );
  await completed(operator, issue);

  // ledgerctl --profile alice transfers create --from $ALICE_USD --to $BOB_USD --amount 1250 --asset USD
  const asAlice = connect(baseUrl, alice.apiKey);
  const pay = ok(await asAlice.POST('/v1/transfers', { params: { header: { 'client-key': 'pay-1' } }, body: { legs: [{ from: aliceUsd, to: bobUsd, amount: '1250', asset: 'USD' }] } }));
  await completed(asAlice, pay);

  // ledgerctl --profile alice grants issue --principal $BOB --subject-account $ALICE_USD --ops transfer --per-operation 500
  const allowance = ok(
    await asAlice.POST('/v1/grants', {
      params: { header: { 'client-key': 'bob-allowance' } },
      body: { kind: 'delegated', principal: bob.identity, subject: { account: aliceUsd }, ops: ['transfer'], per_operation: '500' },
    }),
  );
  const grant = need((await completed(asAlice, allowance))?.grant, 'grant');

  // ledgerctl trial-balance
  const trialBalance = ok(await operator.GET('/v1/trial-balance'));

  // And what the runbook's effects look like through reads: balances, movements by identity, the grant listing.
  const aliceBalances = ok(await asAlice.GET('/v1/accounts/{account}/balances', { params: { path: { account: aliceUsd } } }));
  const aliceMovements = ok(await asAlice.GET('/v1/movements', { params: { query: { of: { identity: alice.identity }, limit: '10' } } }));
  const bobGrants = ok(await asAlice.GET('/v1/accounts/{account}/grants', { params: { path: { account: aliceUsd }, query: { limit: '10' } } }));

  // A refusal comes back typed as the document's refusal shape, with the status's codes.
  const zero = await asAlice.POST('/v1/transfers', { params: { header: { 'client-key': 'zero' } }, body: { legs: [{ from: aliceUsd, to: bobUsd, amount: '0', asset: 'USD' }] } });

  return {
    alice: alice.identity,
    bob: bob.identity,
    aliceUsd,
    bobUsd,
    treasuryUsd,
    grant,
    trialBalance,
    aliceBalances: aliceBalances.balances,
    aliceMovements: aliceMovements.movements.map((m) => ({ direction: m.direction, amount: m.amount, counterparty: m.counterparty })),
    bobGrants: bobGrants.items.map((g) => ({ grant: g.grant, principal: g.terms.principal, per_operation: g.terms.per_operation })),
    zeroAmount: { status: zero.response.status, error: zero.error?.error },
  };
}

const [baseUrl, operatorKey, identitiesKey] = process.argv.slice(2);
if (baseUrl === undefined || operatorKey === undefined || identitiesKey === undefined) {
  console.error('usage: node runbook.js BASE_URL OPERATOR_KEY IDENTITIES_KEY');
  process.exit(2);
}
console.log(JSON.stringify(await runbook(baseUrl, operatorKey, identitiesKey)));
