/**
 * Store layout 7's compact operation form (src/model/codec.ts encodeOperation): every command
 * type and every operation state reads back exactly (bigint amounts, ids with and without their
 * prefix, odd text), as layouts 2-6's JSON object of the same operation does; a damaged text is
 * refused as a DamagedRecord naming the record and the member, never another error.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { decodeOperation, encodeOperation, encodeOperationJson } from '../../src/model/codec.js';
import { DamagedRecord } from '../../src/model/decode.js';
import type { Authority, Command, CommandType, Operation, OperationState } from '../../src/model/model.js';

const states: readonly OperationState[] = ['Received', 'Reserved', 'Instructed', 'Submitted', 'Completed', 'Rejected', 'Expired', 'Captured', 'Released'];
const big = (1n << 200n) + 7n;
const hex = (n: number) => n.toString(16).padStart(64, '0');
const credential = { scheme: 'api-key', verifier: null, tokenHash: hex(1), challenge: null, webauthnId: null, counter: 0 } as const;

/** One command of every type (the type checker holds the list whole). */
const commands: { readonly [K in CommandType]: Extract<Command, { type: K }> } = {
  transfer: { type: 'transfer', legs: [{ from: 'did:ledger:acct:a' as never, to: 'did:ledger:acct:b' as never, asset: 'USD' as never, amountMinor: big }, { from: 'x' as never, to: 'did:ledger:acct:' as never, asset: 'EUR' as never, amountMinor: 1n }], deadlineMs: 2 ** 53 - 1 },
  reserve: { type: 'reserve', payer: 'did:ledger:acct:a' as never, asset: 'USD' as never, amountMinor: big, deadlineMs: 9 },
  capture: { type: 'capture', reservation: 'op_2', to: 'did:ledger:acct:b' as never, amountMinor: 0n },
  release: { type: 'release', reservation: 'op_2' },
  open_account: { type: 'open_account', owner: 'did:ledger:id:a' as never, kind: 'treasury', custody: 'owned', treasuryLimits: { USD: big, EUR: 0n }, acknowledged: hex(2) },
  create_identity: { type: 'create_identity', credential },
  register_credential: { type: 'register_credential', identity: 'did:ledger:id:a' as never, credential, scope: ['did:ledger:acct:a' as never], member: { name: 'root', role: 'admin' } },
  issue_grant: {
    type: 'issue_grant',
    terms: {
      kind: 'delegated', principal: 'did:ledger:id:b' as never, subject: { account: 'did:ledger:acct:a' as never }, ops: ['transfer', 'reserve'], assets: ['USD' as never], counterparties: ['did:ledger:acct:b' as never],
      expiresAtMs: 99, parent: 'did:ledger:grant:g' as never, perOperationMinor: (1n << 128n) - 1n, perWindow: { lengthMs: 1000, limitMinor: 1n << 100n },
    },
    justification: null,
  },
  revoke_grant: { type: 'revoke_grant', grant: 'did:ledger:grant:g' as never },
  register_party: { type: 'register_party', principals: ['did:ledger:id:a' as never] },
  set_member_role: { type: 'set_member_role', member: 'did:ledger:cred:m' as never, role: 'auditor' },
  remove_member: { type: 'remove_member', member: 'did:ledger:cred:m' as never },
  propose: { type: 'propose', request: '{"method":"POST"}', justification: 'why', acts: ['createTransfer'], approverRole: 'operator' },
  reject_proposal: { type: 'reject_proposal', proposal: 'did:ledger:proposal:p', reason: 'no' },
  set_approval_policy: { type: 'set_approval_policy', policy: '{}' },
  reclaim: { type: 'reclaim', account: 'did:ledger:acct:a' as never, credential: 'did:ledger:cred:c' as never, acknowledged: null, proof: { scheme: 'webauthn-es256', challenge: 'ch', counter: 3 } },
  open_custody_change: { type: 'open_custody_change', account: 'did:ledger:acct:a' as never, kind: 'succession', newOwner: 'did:ledger:id:b' as never, to: null },
  cancel_custody_change: { type: 'cancel_custody_change', account: 'did:ledger:acct:a' as never, pending: 'op_3' },
  complete_custody_change: { type: 'complete_custody_change', account: 'did:ledger:acct:a' as never, pending: 'op_3' },
  freeze_account: { type: 'freeze_account', account: 'did:ledger:acct:a' as never, justification: 'j' },
  unfreeze_account: { type: 'unfreeze_account', account: 'did:ledger:acct:a' as never, justification: 'j' },
  close_account: { type: 'close_account', account: 'did:ledger:acct:a' as never },
  restrict_identity: { type: 'restrict_identity', identity: 'did:ledger:id:a' as never, justification: 'j' },
  unrestrict_identity: { type: 'unrestrict_identity', identity: 'did:ledger:id:a' as never, justification: 'j' },
  register_asset: { type: 'register_asset', asset: 'USD' as never, kind: 'fiat', precision: 2 },
  bind_asset: { type: 'bind_asset', asset: 'USD' as never, location: hex(3) },
  deprecate_asset: { type: 'deprecate_asset', asset: 'USD' as never },
  withdraw: { type: 'withdraw', account: 'did:ledger:acct:a' as never, asset: 'USD' as never, amountMinor: big, destination: { instance: 2, accountRef: hex(4) }, deadlineMs: 7 },
  settle: {
    type: 'settle', finalHeight: 4, headHeight: 6, due: ['op_4'],
    blocks: [{ height: 5, deposits: [{ seq: 1, digest: hex(5), location: hex(6), amountMinor: big, accountRef: hex(7), height: 5 }], instructions: [{ digest: hex(8), location: hex(6), amountMinor: 3n }], expired: ['op_5'], attestations: [{ location: hex(6), symbol: 'USDX', decimals: 6, status: 'active' }] }],
  },
  observe: { type: 'observe', deposit: { seq: 2, digest: hex(9), location: hex(6), amountMinor: 1n, accountRef: hex(7), height: null }, final: true },
};

// Text of any kind where the record holds text (lone surrogates, quotes, backslashes, line breaks), and ids with their prefix or without.
const oddText = fc.string({ unit: 'binary', maxLength: 10 });
const id = (prefix: string) => fc.oneof(fc.stringMatching(/^[A-Za-z0-9._-]{0,40}$/).map((s) => `${prefix}${s}`), oddText, fc.constant(prefix.slice(0, -1)));
const amount = fc.bigInt({ min: 0n, max: (1n << 256n) - 1n });
const time = fc.integer({ min: 0, max: 2 ** 50 });
const authority: fc.Arbitrary<Authority> = fc.record({
  principal: id('did:ledger:id:'),
  credential: id('did:ledger:cred:'),
  onBehalfOf: fc.option(id('did:ledger:id:'), { nil: null }),
  grant: fc.option(id('did:ledger:grant:'), { nil: null }),
  kind: fc.constantFrom('owner', 'delegated', 'operator', 'issuance', 'recovery'),
}) as fc.Arbitrary<Authority>;
const leg = fc.record({ from: id('did:ledger:acct:'), to: id('did:ledger:acct:'), asset: oddText, amountMinor: amount });
const command: fc.Arbitrary<Command> = fc.oneof(
  fc.constantFrom(...Object.values(commands)),
  fc.record({ type: fc.constant('transfer'), legs: fc.array(leg, { maxLength: 4 }), deadlineMs: time }),
  fc.record({ type: fc.constant('reserve'), payer: id('did:ledger:acct:'), asset: oddText, amountMinor: amount, deadlineMs: time }),
  fc.record({ type: fc.constant('capture'), reservation: oddText, to: id('did:ledger:acct:'), amountMinor: fc.option(amount, { nil: null }) }),
  fc.record({ type: fc.constant('release'), reservation: oddText }),
) as fc.Arbitrary<Command>;
const operation: fc.Arbitrary<Operation> = fc
  .record(
    {
      ref: oddText,
      cseq: fc.nat(),
      command,
      actor: authority,
      scope: fc.option(fc.array(id('did:ledger:acct:'), { maxLength: 3 }), { nil: null }),
      state: fc.constantFrom(...states),
      submittedAtMs: time,
      decidedAtMs: fc.option(time, { nil: null }),
      clientKey: oddText,
      clientKeyDerived: fc.boolean(),
      reference: fc.option(fc.oneof(fc.json(), oddText), { nil: null }),
      result: fc.option(
        fc.oneof(
          fc.record({ postings: fc.array(fc.nat(), { maxLength: 8 }) }),
          fc.record({ postings: fc.array(fc.nat()), pending: oddText }),
          fc.record({ account: id('did:ledger:acct:') }, { requiredKeys: [] }),
          fc.record({ settlement: fc.dictionary(oddText, oddText) }),
        ),
        { nil: null },
      ),
      error: fc.option(fc.record({ error: fc.constantFrom('ERR-InsufficientFunds', 'ERR-Internal'), description: oddText }), { nil: null }),
      hold: fc.option(fc.record({ payer: id('did:ledger:acct:'), asset: oddText, amountMinor: amount, deadlineMs: time, authority }, { requiredKeys: ['payer', 'asset', 'amountMinor', 'deadlineMs'] }), { nil: null }),
      act: oddText,
      approval: fc.record({ proposal: oddText, approver: id('did:ledger:cred:') }),
      unapproved: fc.constant(true as const),
    },
    { requiredKeys: ['ref', 'cseq', 'command', 'actor', 'scope', 'state', 'submittedAtMs', 'decidedAtMs', 'clientKey', 'clientKeyDerived', 'reference', 'result', 'error', 'hold'] },
  )
  .map((op) => op as unknown as Operation);

/** The message of the DamagedRecord that decoding `text` throws. */
function refusal(text: string): string {
  try {
    decodeOperation(text);
  } catch (error) {
    expect(error).toBeInstanceOf(DamagedRecord);
    return (error as Error).message;
  }
  throw new Error(`${text} decoded`);
}

describe("store layout 7's compact operation form", () => {
  it('reads back every command type in every state, as layouts 2-6\'s object of the same operation reads', () => {
    const actor = { principal: 'did:ledger:id:operator', credential: 'did:ledger:cred:root', onBehalfOf: null, grant: null, kind: 'operator' } as Authority;
    for (const state of states) {
      for (const c of Object.values(commands)) {
        const op = {
          ref: 'op_1', cseq: 7, command: c, actor, scope: null, state, submittedAtMs: 1_795_894_825_824, decidedAtMs: state === 'Received' ? null : 1_795_894_825_825, clientKey: 'k', clientKeyDerived: false,
          reference: '{"crm": 1.0}', result: state === 'Completed' ? { postings: [5, 6] } : null, error: state === 'Rejected' ? { error: 'ERR-Internal', description: 'x' } : null,
          hold: state === 'Reserved' ? { payer: 'did:ledger:acct:a', asset: 'USD', amountMinor: big, deadlineMs: 9, authority: actor } : null,
        } as unknown as Operation;
        const text = encodeOperation(op);
        expect(text[0]).toBe('[');
        expect(decodeOperation(text), `${state} ${c.type}`).toEqual(op);
        expect(decodeOperation(encodeOperationJson(op))).toEqual(op);
      }
    }
    // Positional where it counts: a decided 1-leg transfer holds no member name and no prefix of an id.
    const decided = encodeOperation({
      ref: 'op_c653638ff729d91c3fc92940c16a4333', cseq: 6, command: commands.transfer, actor, scope: null, state: 'Completed', submittedAtMs: 1_795_894_825_824, decidedAtMs: 1_795_894_825_825,
      clientKey: 'da0dfd8a325dd5f8', clientKeyDerived: false, reference: null, result: { postings: [5, 6] }, error: null, hold: null, act: 'createTransfer',
    } as unknown as Operation);
    expect(decided).toBe(
      `["op_c653638ff729d91c3fc92940c16a4333",6,"da0dfd8a325dd5f8",1795894825824,[0,9007199254740991,["a","b","USD","${big}"],[["x"],"","EUR","1"]],["operator","root",2],4,null,"createTransfer",1,[5,6]]`,
    );
  });

  it('reads back any operation exactly, and one read from layouts 2-6\'s form writes the same text', () => {
    fc.assert(
      fc.property(operation, (op) => {
        const text = encodeOperation(op);
        const read = decodeOperation(text);
        expect(read).toEqual(op);
        expect(encodeOperation(read)).toBe(text);
        expect(encodeOperation(decodeOperation(encodeOperationJson(op)))).toBe(text);
      }),
      { numRuns: 2000 },
    );
  });

  it('refuses a damaged text as a DamagedRecord naming the operation record and the member', () => {
    const text = '["op_1",6,"k",100,[0,130,["a","b","USD","5"]],["operator","root",2],4,null,"createTransfer",1,[5,6]]';
    expect(decodeOperation(text)).toMatchObject({ ref: 'op_1', decidedAtMs: 101, act: 'createTransfer', result: { postings: [5, 6] } });
    const named: [string, string][] = [
      [text.slice(0, -1), 'is not JSON'],
      ['{"ref":"op_1"', 'is not JSON'],
      ['["op_1",6,"k",100,[0,130],["operator","root",2]]', 'is not a list of 7 to 16 members'],
      [`${text.slice(0, -1)},0,null,null,null,null,null]`, 'is not a list of 7 to 16 members'],
      [text.replace('"op_1"', '1'), 'ref is not a string'],
      [text.replace(',6,', ',6.5,'), 'cseq is not an integer'],
      [text.replace('"k"', 'null'), 'clientKey is not a string'],
      [text.replace(',100,', ',"100",'), 'submittedAtMs is not an integer'],
      [text.replace(',4,null', ',9,null'), 'state is not one of 9 values'],
      [text.replace(',4,null', ',-1,null'), 'state is not one of 9 values'],
      [text.replace('null,"createTransfer"', '5,"createTransfer"'), 'reference is not a string or null'],
      [text.replace('"createTransfer"', '7'), 'act is not a string or null'],
      [text.replace(',1,[5,6]', ',"1",[5,6]'), 'decided is not an integer or null'],
      [text.replace(',1,[5,6]', ',9007199254740991,[5,6]'), 'decided is not a time'],
      [text.replace('[5,6]', '[5,"6"]'), 'result is not a list of journal positions'],
      [text.replace('[5,6]', '"done"'), 'result is not an object or a list of journal positions'],
      [text.replace('[5,6]]', '[5,6],"no"]'), 'error is not an object'],
      [text.replace('[5,6]]', '[5,6],null,["a","USD","5"]]'), 'is not a list of 4 to 5 members'],
      [text.replace('[5,6]]', '[5,6],null,["a","USD",5,9]]'), 'amountMinor is not decimal text'],
      [text.replace('[5,6]]', '[5,6],null,["a","USD","5",9,["p"]]]'), 'is not a list of 3 to 5 members'],
      [text.replace('[5,6]]', '[5,6],null,null,4]'), 'flags is not one of 0 to 3'],
      [text.replace('[5,6]]', '[5,6],null,null,0,"all"]'), 'scope is not a list'],
      [text.replace('[5,6]]', '[5,6],null,null,0,[["a","b"]]]'), 'scope is not an identifier'],
      [text.replace('[5,6]]', '[5,6],null,null,0,null,["p"]]'), 'is not a list of 2 members'],
      [text.replace('[0,130,', '[4,130,'), 'command tag 4 is not known'],
      [text.replace('[0,130,["a","b","USD","5"]]', '"transfer"'), 'command is not a list or an object'],
      [text.replace('[0,130,["a","b","USD","5"]]', '[0]'), 'a transfer is not [0, deadlineMs, leg…]'],
      [text.replace('[0,130,', '[0,"130",'), 'deadlineMs is not an integer'],
      [text.replace('"USD","5"', '"USD","05"'), 'amountMinor is not decimal text'],
      [text.replace('"USD","5"', '"USD","-0x5"'), 'amountMinor is not decimal text'],
      [text.replace('["a","b","USD","5"]', '["a","b","USD"]'), 'is not a list of 4 members'],
      [text.replace('["a","b",', '[7,"b",'), 'from is not an identifier'],
      [text.replace('["a","b",', '["a",["b","c"],'), 'to is not an identifier'],
      [text.replace('[0,130,["a","b","USD","5"]]', '[1,"a","USD","5"]'), 'is not a list of 5 members'],
      [text.replace('[0,130,["a","b","USD","5"]]', '[2,"op_2","b",5]'), 'amountMinor is not decimal text'],
      [text.replace('[0,130,["a","b","USD","5"]]', '[3,null]'), 'reservation is not a string'],
      [text.replace('[0,130,["a","b","USD","5"]]', '{"type":"teleport"}'), 'command type "teleport" is not known'],
      [text.replace('[0,130,["a","b","USD","5"]]', '{"type":"reserve","payer":"a","asset":"USD","amountMinor":"x","deadlineMs":1}'), 'amountMinor is not decimal text'],
      [text.replace('[0,130,["a","b","USD","5"]]', '{"type":"issue_grant","terms":{"kind":"issuance","principal":"did:ledger:id:operator","subject":{"account":"did:ledger:acct:t"},"ops":["transfer"],"per_operation":"340282366920938463463374607431768211456"},"justification":"j"}'), 'terms do not parse: per_operation is above 2^128-1'],
      [text.replace('["operator","root",2]', '["operator","root"]'), 'is not a list of 3 to 5 members'],
      [text.replace('["operator","root",2]', '["operator","root",5]'), 'kind is not one of 5 values'],
      [text.replace('["operator","root",2]', '[null,"root",2]'), 'principal is not an identifier'],
      [text.replace('["operator","root",2]', '["operator","root",2,7]'), 'on_behalf_of is not an identifier'],
      [text.replace('["operator","root",2]', '["operator","root",2,null,{}]'), 'grant is not an identifier'],
    ];
    for (const [damaged, why] of named) expect(refusal(damaged), damaged).toBe(`damaged operation record: ${why}`);
    // Any small damage anywhere: read as some operation, or refused as damaged; never another error.
    const tricky = fc.constantFrom('0', '1', '-', '"', '\\', ',', '[', ']', '{', '}', 'n', 'e', '.', ' ', 'null', '\ud800');
    fc.assert(
      fc.property(operation, fc.nat(), fc.nat({ max: 3 }), tricky, (op, at, cut, insert) => {
        const whole = encodeOperation(op);
        const i = at % (whole.length + 1);
        const damagedText = whole.slice(0, i) + insert + whole.slice(i + cut);
        try {
          decodeOperation(damagedText);
        } catch (error) {
          expect(error, damagedText).toBeInstanceOf(DamagedRecord);
        }
      }),
      { numRuns: 3000 },
    );
  });
});
