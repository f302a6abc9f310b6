/**
 * JSON Schema pieces shared by the routes. Schemas check shapes (types, required
 * members, unknown members); values are parsed by src/model/values.ts in the handlers so
 * that each failure gets the spec's own code (ERR-PrecisionExceeded, ERR-ZeroAmount…).
 * AJV runs without coercion or removal of unknown members (see app.ts).
 */
import { amountDigitsMax, assetPrecisionMax, clientKeyLengthMax, idLengthMax, movementsPageLimitMax, operationRefLengthMax, symbolLengthMax } from '../../src/constants.js';
import { type IdKind, idPrefix } from '../../src/model/values.js';

export type Schema = Record<string, unknown>;

/** A format the OpenAPI document names as `#/components/schemas/<name>`. */
export interface Component {
  readonly name: string;
  /** The schema as documented: what AJV checks plus what the handler's parse checks. */
  readonly documented: Schema;
}
const components = new WeakMap<Schema, Component>();
const nullableBases = new WeakMap<Schema, Schema>();

/**
 * Shares `schema` as a component of the document. `checkedByHandler` (patterns) is shown in
 * the document but not given to AJV: the handlers parse those values (src/model/values.ts) so that
 * each failure keeps the spec's own code — an amount "0" is ERR-ZeroAmount, "1.5"
 * ERR-PrecisionExceeded, a missing movements bound ERR-QueryUnbounded — where AJV would
 * answer ERR-MalformedCommand.
 */
export function component(name: string, schema: Schema, checkedByHandler: Schema = {}): Schema {
  // A member `checkedByHandler` sets to undefined is left out of the document (a `type` its oneOf branches state better).
  const documented = Object.fromEntries(Object.entries({ ...schema, ...checkedByHandler }).filter(([, v]) => v !== undefined));
  components.set(schema, { name, documented });
  return schema;
}
export const componentOf = (schema: Schema): Component | undefined => components.get(schema);
/** The schema `nullable` was made from, so the document can say `anyOf: [$ref, null]`. */
export const nullableBaseOf = (schema: Schema): Schema | undefined => nullableBases.get(schema);

export const str = (description: string, extra: Schema = {}): Schema => ({ type: 'string', description, ...extra });
export const uintNumber = (description: string): Schema => ({ type: 'integer', minimum: 0, description });
export function nullable(schema: Schema): Schema {
  const made = { ...schema, type: [schema.type as string, 'null'] };
  nullableBases.set(made, schema);
  return made;
}
export const digitsText = (description: string): Schema => str(description, { pattern: '^[0-9]+$' });

/** The formats of CONTRACT 3, as the handlers' parsers (src/model/values.ts) enforce them. */
const idPattern = (kind: IdKind) => `^${idPrefix[kind]}[A-Za-z0-9._-]{1,${idLengthMax}}$`;
const id = (name: string, kind: IdKind, what: string) => component(name, str(`${what}, ${idPrefix[kind]}<id>, <id> 1-${idLengthMax} of A-Za-z0-9._-`), {
    pattern: idPattern(kind),
    maxLength: idPrefix[kind].length + idLengthMax,
  });
/** Unsigned minor units: no sign, no leading zeros, no exponent, at most 2^128 - 1 (so at most amountDigitsMax digits). */
const minorDigits = `[1-9][0-9]{0,${amountDigitsMax - 1}}`;

export const accountId = id('AccountId', 'account', 'ledger account');
export const identityId = id('IdentityId', 'identity', 'identity');
export const assetSymbol = component('AssetSymbol', str(`asset symbol, 1-${symbolLengthMax} of A-Z0-9, first a letter`), {
  pattern: `^[A-Z][A-Z0-9]{0,${symbolLengthMax - 1}}$`,
});
export const amount = component('AmountMinor', str('minor units, a decimal integer from 1 to 2^128 - 1 without sign, leading zeros or exponent'), {
  pattern: `^${minorDigits}$`,
});
/** A bound (grant and treasury limits), where zero is allowed. */
export const limitMinor = component('LimitMinor', str('minor units, a decimal integer from 0 to 2^128 - 1 without sign, leading zeros or exponent'), {
  pattern: `^(0|${minorDigits})$`,
});
/** Balances and sums, which may be below zero (treasury accounts, trial balance openings). */
export const signedMinor = component('SignedMinor', str('minor units, a decimal integer that may carry a leading -'), { pattern: '^(0|-?[1-9][0-9]*)$' });
export const hexCursor = component('Cursor', str("a page's continuation (hex): send it back as `cursor` for the following page; absent on the last"), {
  pattern: '^[0-9a-fA-F]+$',
});
export const reference = component('Reference', { description: 'pass-through JSON value, at most 1024 bytes of UTF-8, echoed exactly as sent' });
export const operationRef = component('OperationReference', str('operation reference', { pattern: `^[A-Za-z0-9_.-]{1,${operationRefLengthMax}}$`, maxLength: operationRefLengthMax }));

/** An object schema that refuses unknown members. */
export function object(properties: Record<string, Schema>, required: readonly string[] = []): Schema {
  return { type: 'object', properties, required, additionalProperties: false };
}

/** Querystring of a route with no parameters: any parameter is unknown. */
export const noQuery = object({});

export const commandHeaders: Schema = {
  type: 'object',
  properties: {
    'client-key': str(`client key, 1-${clientKeyLengthMax} characters`, { minLength: 1, maxLength: clientKeyLengthMax }),
    'on-behalf-of': identityId,
  },
};

export const refusalSchema = component('Refusal', object({ error: str('ERR-* code', { pattern: '^ERR-[A-Za-z]+$' }), description: str('why') }, ['error', 'description']));

export const credentialId = id('CredentialId', 'credential', 'credential');
export const grantId = id('GrantId', 'grant', 'grant');
export const partyId = id('PartyId', 'party', 'integrating party');

const resultSchema = object({
  account: nullable(accountId),
  identity: nullable(identityId),
  party: nullable(partyId),
  credential: nullable(credentialId),
  grant: nullable(grantId),
  pending: nullable(str('the operation that opened a pending recovery or succession')),
  effective_at: { type: ['integer', 'null'], minimum: 0, description: 'ms: when that pending change may complete' },
  postings: { type: 'array', items: uintNumber('posting sequence number') },
  disclosure: nullable(str('the disclosure, hex (docs/disclosures.md)')),
  anchoring: { type: 'object', description: 'an anchoring command: `checkpoint` and `comparison` (docs/settlement.md)' },
  settlement: { type: 'object', description: 'the result of a settlement command (spec 2.2; docs/settlement.md)' },
  proposal: str('a proposal stored: did:ledger:proposal:<id> (CONTRACT 13)'),
  operation: str("an approval: the approved act's operation reference (CONTRACT 13)"),
});

/** Spec 2.1's reply, one component: every command route answers it (test/daemon/command-replies.test.ts). */
export const commandReplySchema = component('CommandReply', object(
  {
    client_key: str('the client key the command was taken under'),
    client_key_derived: { type: 'boolean' },
    operation_reference: operationRef,
    terminal: { type: 'boolean' },
    class: { enum: ['terminal'] },
    state: nullable(str('operation state')),
    reference,
    api_key: nullable(str('issued once')),
    result: resultSchema,
  },
  ['client_key', 'client_key_derived', 'operation_reference', 'terminal'],
));

export const operationViewSchema = object(
  {
    operation_reference: operationRef,
    command: str('command type'),
    principal: str('the principal that submitted it'),
    credential: str('the credential it was submitted with'),
    on_behalf_of: identityId,
    moves: {
      type: 'array',
      description: "what the command asks to move: a transfer's legs, a reservation's hold (to null)",
      items: object({ from: str('debited account'), to: nullable(str('credited account')), amount: str('minor units'), asset: str('asset symbol') }, ['from', 'to', 'amount', 'asset']),
    },
    deadline: uintNumber("ms: when a transfer or withdrawal must be decided by, or a reservation's hold expires"),
    state: str('operation state'),
    terminal: { type: 'boolean' },
    submitted_at: uintNumber('ms'),
    decided_at: { type: ['integer', 'null'] },
    client_key: str('client key'),
    reference,
    result: resultSchema,
    error: refusalSchema,
  },
  ['operation_reference', 'command', 'principal', 'state', 'terminal', 'submitted_at', 'decided_at', 'client_key'],
);

const balance = object({ available: signedMinor, encumbered: signedMinor, reserved: signedMinor }, ['available', 'encumbered', 'reserved']);
const authority = object(
  { credential: str('credential'), grant: nullable(str('grant')), kind: str('authority kind'), on_behalf_of: nullable(identityId), principal: identityId },
  ['credential', 'grant', 'kind', 'on_behalf_of', 'principal'],
);
export const movementSchema = object(
  {
    account: accountId,
    amount,
    asset: assetSymbol,
    at: uintNumber('posting time, ms'),
    authorities: { type: 'array', items: authority },
    balance: { enum: ['available', 'reserved', 'encumbered'] },
    counterparty: nullable(accountId),
    direction: { enum: ['debit', 'credit'] },
    kind: str('posting kind'),
    operation: operationRef,
    reference,
    seq: uintNumber('journal position'),
    status: { enum: ['held', 'completed', 'returned', 'reversed', 'opening'] },
  },
  ['account', 'amount', 'asset', 'at', 'authorities', 'balance', 'counterparty', 'direction', 'kind', 'operation', 'seq', 'status'],
);
export const statementSchema = object(
  {
    account: accountId,
    asset: assetSymbol,
    closed: { type: 'boolean' },
    from: uintNumber('ms, inclusive'),
    to: uintNumber('ms, exclusive'),
    from_seq: uintNumber('first journal position of the period'),
    to_seq: uintNumber('last journal position of the period'),
    opening: balance,
    closing: balance,
    movements: { type: 'array', items: movementSchema },
  },
  ['account', 'asset', 'closed', 'from', 'to', 'from_seq', 'to_seq', 'opening', 'closing', 'movements'],
);
export const movementsPageSchema = object(
  { movements: { type: 'array', maxItems: movementsPageLimitMax, items: movementSchema }, next: hexCursor, view: uintNumber('view') },
  ['movements', 'view'],
);
export const trialBalanceSchema = object(
  {
    accounts: uintNumber('kernel accounts summed'),
    rows: {
      type: 'array',
      items: object(
        {
          asset: assetSymbol,
          openings: signedMinor,
          layers: object({ available: signedMinor, reserved: signedMinor, encumbered: signedMinor }, ['available', 'reserved', 'encumbered']),
          debits: str('with gross=true: the sum of the balances below zero (every layer), as a positive figure', { pattern: '^(0|[1-9][0-9]*)$' }),
          credits: str('with gross=true: the sum of the balances above zero (every layer)', { pattern: '^(0|[1-9][0-9]*)$' }),
        },
        ['asset', 'openings', 'layers'],
      ),
    },
    unbalanced: { type: 'array', items: object({ currency: uintNumber('asset code'), layer: uintNumber('view') }, ['currency', 'layer']) },
    view: uintNumber('view'),
    accounts_page: object(
      {
        items: {
          type: 'array',
          maxItems: movementsPageLimitMax,
          items: object(
            { account: accountId, asset: assetSymbol, available: signedMinor, reserved: signedMinor, encumbered: signedMinor, balance: signedMinor },
            ['account', 'asset', 'available', 'reserved', 'encumbered', 'balance'],
          ),
        },
        next: hexCursor,
        view: uintNumber('view'),
      },
      ['items', 'view'],
    ),
  },
  ['accounts', 'rows', 'unbalanced', 'view'],
);
export const accountViewSchema = object(
  {
    account: accountId,
    closed: { type: 'boolean' },
    custody: { enum: ['delegated', 'owned'] },
    kind: { enum: ['customer', 'treasury'] },
    status: { enum: ['active', 'frozen', 'closed'] },
    opened_at: uintNumber('ms'),
    owner: identityId,
    deposit_ref: str('32 bytes hex: the account_ref a deposit on the settlement layer names to reach this account'),
  },
  ['account', 'closed', 'custody', 'kind', 'status', 'opened_at', 'owner'],
);
/** An account's balances in every asset it has held (CONTRACT 11). */
export const accountBalancesSchema = object(
  {
    account: accountId,
    view: uintNumber('view'),
    balances: { type: 'array', items: object({ asset: assetSymbol, available: signedMinor, reserved: signedMinor, encumbered: signedMinor }, ['asset', 'available', 'reserved', 'encumbered']) },
  },
  ['account', 'view', 'balances'],
);
/** A page of an identity's accounts (CONTRACT 11); `next` is the cursor of the following page. */
export const accountListingSchema = object(
  { items: { type: 'array', maxItems: movementsPageLimitMax, items: accountViewSchema }, next: hexCursor, view: uintNumber('view') },
  ['items', 'view'],
);
export const custodyViewSchema = object(
  {
    account: accountId,
    custody: { enum: ['delegated', 'owned'] },
    epoch: uintNumber('custody changes so far'),
    owner: identityId,
    successor: { type: ['string', 'null'] },
    changes: {
      type: 'array',
      items: object(
        {
          effective_at: uintNumber('ms'),
          initiated_at: uintNumber('ms'),
          kind: { enum: ['recovery', 'succession'] },
          pending: { type: 'string' },
          state: { enum: ['pending', 'cancelled', 'completed'] },
        },
        ['effective_at', 'initiated_at', 'kind', 'pending', 'state'],
      ),
    },
  },
  ['account', 'custody', 'epoch', 'owner', 'changes'],
);
const mechanismSchema = object(
  { mechanism: { enum: ['recovery_authority'] }, authority: identityId, delay: uintNumber('ms') },
  ['mechanism', 'authority', 'delay'],
);
/** Recovery mechanisms (endpoint 17); with `identity`, an identity's recovery terms (CONTRACT 8). */
export const mechanismsSchema = object(
  { digest: str('lowercase hex SHA-256 of the canonical JSON of mechanisms', { pattern: '^[0-9a-f]{64}$' }), mechanisms: { type: 'array', items: mechanismSchema } },
  ['digest', 'mechanisms'],
);
export const recoveryTermsSchema = object({ identity: identityId, ...(mechanismsSchema.properties as Record<string, Schema>) }, ['identity', 'digest', 'mechanisms']);
export const assetSchema = object(
  {
    id: assetSymbol,
    kind: { enum: ['fiat', 'stable', 'native', 'other'] },
    precision: { type: 'integer', minimum: 0, maximum: assetPrecisionMax },
    status: { enum: ['active', 'deprecated'] },
    binding: { enum: ['book_only', 'binding', 'bound'] },
    location: nullable(str('settlement-layer location')),
  },
  ['id', 'kind', 'precision', 'status', 'binding', 'location'],
);

/** Refusals every protected route may answer (spec 7: any route may refuse with any code). */
const refusals = { 400: refusalSchema, 401: refusalSchema, 403: refusalSchema, 404: refusalSchema, 409: refusalSchema, 410: refusalSchema, 503: refusalSchema };

export function responses(success: Record<number, Schema>): Record<number, Schema> {
  return { ...success, ...refusals };
}
