/**
 * Stored records go through one checked decode path (src/model/decode.ts): a record
 * that is not JSON, or whose fields lack their shape, is refused as a DamagedRecord
 * naming the record and the field; a record that checks decodes as before, and encodes
 * back to the same bytes.
 */
import { describe, expect, it } from 'vitest';
import { AssertionFailure } from '../../src/assert.js';
import {
  decodeAccount,
  decodeAsset,
  decodeBalanceText,
  decodeHead,
  decodeIdentity,
  decodeIndexedPosting,
  decodeOperation,
  encodeAccount,
  encodeAsset,
  encodeHead,
  encodeIdentity,
  encodeOperationJson,
} from '../../src/model/codec.js';
import { DamagedRecord, recordJsonList } from '../../src/model/decode.js';

function refusal(decode: () => unknown): string {
  try {
    decode();
  } catch (error) {
    expect(error).toBeInstanceOf(DamagedRecord);
    expect(error).toBeInstanceOf(AssertionFailure); // fatal to the kernel
    return (error as Error).message;
  }
  throw new Error('decoded');
}

const account = '{"id":"did:ledger:acct:a","owner":"did:ledger:id:a","kind":"treasury","custody":"delegated","status":"active","openedAtMs":0,"epoch":0,"treasuryLimits":{"USD":"1000"}}';
const accountKey = 'acct/did:ledger:acct:a';
/** The same account in store layout 7's form (encodeAccount). */
const accountTuple = '["did:ledger:id:a",1,0,0,0,0,{"USD":"1000"}]';
const asset = '{"id":"USD","code":1,"kind":"fiat","precision":2,"status":"active","binding":"book_only","location":null}';
const identity = '{"id":"did:ledger:id:a","createdAtMs":5,"accounts":["did:ledger:acct:a"]}';
const identityKey = 'id/did:ledger:id:a';
/** The same identity in store layout 7's form (encodeIdentity). */
const identityTuple = '[5,["did:ledger:acct:a"]]';
const head = '{"decidedCseq":3,"postingSeq":9,"eventSeq":4,"lastAtMs":1700000000000,"accounts":7}';
const operation =
  '{"ref":"op_1","cseq":1,"command":{"type":"reserve","payer":"did:ledger:acct:a","asset":"USD","amountMinor":"5","deadlineMs":9},"actor":{"principal":"did:ledger:id:a","credential":"c","onBehalfOf":null,"grant":null,"kind":"owner"},"scope":null,"state":"Reserved","submittedAtMs":1,"decidedAtMs":2,"clientKey":"k","clientKeyDerived":false,"reference":null,"result":{"postings":[1,2]},"error":null,"hold":{"payer":"did:ledger:acct:a","asset":"USD","amountMinor":"5","deadlineMs":9}}';

describe('checked decoding of stored records', () => {
  it('decodes records that check, and encodes them back to the same bytes', () => {
    // Layout 6's account object reads as it stands and is written as layout 7's tuple, which reads back the same.
    expect(encodeAccount(decodeAccount(account, accountKey))).toBe(accountTuple);
    expect(decodeAccount(accountTuple, accountKey)).toEqual(decodeAccount(account, accountKey));
    expect(decodeAccount(account, accountKey).treasuryLimits).toEqual({ USD: 1000n });
    expect(encodeAccount(decodeAccount(accountTuple, accountKey))).toBe(accountTuple);
    // One with custody's records stays an object (the tuple has no place for them).
    const owned = account.replace('"treasuryLimits"', '"changes":[],"treasuryLimits"');
    expect(encodeAccount(decodeAccount(owned, accountKey))).toBe(owned);
    expect(encodeAsset(decodeAsset(asset))).toBe(asset);
    // Layout 6's identity object reads as it stands and is written as layout 7's tuple; one with a count of closed accounts stays an object.
    expect(encodeIdentity(decodeIdentity(identity, identityKey))).toBe(identityTuple);
    expect(decodeIdentity(identityTuple, identityKey)).toEqual(decodeIdentity(identity, identityKey));
    expect(encodeIdentity(decodeIdentity(identityTuple, identityKey))).toBe(identityTuple);
    const closing = identity.replace('}', ',"closedAccounts":1}');
    expect(encodeIdentity(decodeIdentity(closing, identityKey))).toBe(closing);
    expect(encodeHead(decodeHead(head))).toBe(head);
    expect(encodeOperationJson(decodeOperation(operation))).toBe(operation);
    expect(decodeBalanceText('{"a":"-12","r":"0","e":"3"}')).toEqual({ available: -12n, reserved: 0n, encumbered: 3n });
    // A field a newer writer added is left alone.
    expect(decodeHead(head.replace('}', ',"frontier":"x"}'))).toMatchObject({ postingSeq: 9 });
  });

  it('refuses damage, naming the record and the field', () => {
    expect(refusal(() => decodeHead('{"decidedCseq":3'))).toBe('damaged head record: is not JSON');
    expect(refusal(() => decodeHead('[1,2]'))).toBe('damaged head record: is not a JSON object');
    expect(refusal(() => decodeHead(head.replace('"postingSeq":9', '"postingSeq":"9"')))).toBe('damaged head record: postingSeq is not an integer');
    expect(refusal(() => decodeAccount(account.replace('"treasury"', '"savings"'), accountKey))).toBe('damaged account record: kind is not one of customer, treasury');
    expect(refusal(() => decodeAccount(account.replace('"1000"', '1000'), accountKey))).toBe('damaged account record: USD is not decimal text');
    expect(refusal(() => decodeAccount(account, 'acct/did:ledger:acct:b'))).toBe("damaged account record: id is not its key's");
    expect(refusal(() => decodeAccount(accountTuple, 'bal/did:ledger:acct:a'))).toBe('damaged account record: is not under an account key');
    expect(refusal(() => decodeAccount(accountTuple.replace(',1,0,0,', ',2,0,0,'), accountKey))).toBe('damaged account record: kind is not one of 2 values');
    expect(refusal(() => decodeAccount(accountTuple.replace(',1,0,0,', ',1,0,"active",'), accountKey))).toBe('damaged account record: status is not an integer');
    expect(refusal(() => decodeAccount(accountTuple.replace('"1000"', '1000'), accountKey))).toBe('damaged account record: USD is not decimal text');
    expect(refusal(() => decodeAccount(accountTuple.replace(',{"USD":"1000"}', ''), accountKey))).toBe('damaged account record: is not a list of 7 members');
    expect(refusal(() => decodeAccount('[7,0,0,0,0,0,{}]', accountKey))).toBe('damaged account record: owner is not a string');
    expect(refusal(() => decodeAccount('["x",0,0,0,0,0,', accountKey))).toBe('damaged account record: is not JSON');
    expect(refusal(() => decodeAsset(asset.replace('"precision":2', '"precision":2.5')))).toBe('damaged asset record: precision is not an integer');
    expect(refusal(() => decodeIdentity(identity.replace('["did:ledger:acct:a"]', '[7]'), identityKey))).toBe('damaged identity record: accounts is not a list of strings');
    expect(refusal(() => decodeIdentity(identityTuple.replace('["did:ledger:acct:a"]', '[7]'), identityKey))).toBe('damaged identity record: accounts is not a list of strings');
    expect(refusal(() => decodeIdentity(identityTuple.replace('[5,', '["5",'), identityKey))).toBe('damaged identity record: createdAtMs is not an integer');
    expect(refusal(() => decodeIdentity('[5]', identityKey))).toBe('damaged identity record: is not a list of 2 members');
    expect(refusal(() => decodeIdentity(identity, 'id/did:ledger:id:b'))).toBe("damaged identity record: id is not its key's");
    expect(refusal(() => decodeIdentity(identityTuple, 'acct/did:ledger:id:a'))).toBe('damaged identity record: is not under an identity key');
    expect(refusal(() => decodeBalanceText('{"a":"1.5","r":"0","e":"0"}'))).toBe('damaged balance record: a is not decimal text');
    expect(refusal(() => decodeBalanceText('{"a":"01","r":"0","e":"0"}'))).toBe('damaged balance record: a is not decimal text');
    expect(refusal(() => decodeOperation(operation.replace('"Reserved"', '"Pending"')))).toContain('damaged operation record: state is not one of');
    expect(refusal(() => decodeOperation(operation.replace('"type":"reserve"', '"type":"teleport"')))).toBe('damaged operation record: command type "teleport" is not known');
    expect(refusal(() => decodeOperation(operation.replace('"amountMinor":"5","deadlineMs":9}', '"amountMinor":"x","deadlineMs":9}')))).toContain('is not decimal text');
    const indexKey = 'aa/did:ledger:acct:a/USD/0000000000000007';
    const indexed = '[5,"10",1,0,1,1,"op_1",null,[["did:ledger:cred:c",null,0,null,"did:ledger:id:a"]],null,"10","0","0"]';
    expect(decodeIndexedPosting(indexKey, indexed)).toMatchObject({ seq: 7, account: 'did:ledger:acct:a', asset: 'USD', amountMinor: 10n, direction: 'credit', kind: 'transfer', status: 'completed' });
    expect(refusal(() => decodeIndexedPosting(indexKey, '[5,"10"'))).toBe(`damaged account index entry ${indexKey} record: is not JSON`);
    expect(refusal(() => decodeIndexedPosting(indexKey, '[5,"10",1]'))).toBe(`damaged account index entry ${indexKey} record: is not a list of 13 members`);
    expect(refusal(() => decodeIndexedPosting(indexKey, indexed.replace('1,0,1,1', '1,0,9,1')))).toBe(`damaged account index entry ${indexKey} record: kind is not one of 9 values`);
    expect(refusal(() => decodeIndexedPosting(indexKey, indexed.replace('null,"10","0"', '{"not":"text"},"10","0"')))).toBe(`damaged account index entry ${indexKey} record: reference is not a string or null`);
    expect(refusal(() => decodeIndexedPosting(indexKey, indexed.replace('"op_1",null,[["did', '"op_1",null,[["did:x"],["did')))).toBe(`damaged account index entry ${indexKey} record: is not a list of 5 members`);
    expect(refusal(() => decodeIndexedPosting('aa/did:ledger:acct:a/USD/7', indexed))).toBe('damaged account index entry aa/did:ledger:acct:a/USD/7 record: is not under an index key');
    // A genesis opening's entry (layout 7, encodeIndexedOpening): what every opening holds alike left out, checked alike.
    const opening = '[5,"10",1,2,"0","0","10"]';
    expect(decodeIndexedPosting(indexKey, opening)).toEqual({ ...decodeIndexedPosting(indexKey, '[5,"10",1,2,0,4,"genesis",null,[["did:ledger:cred:genesis",null,2,null,"did:ledger:id:operator"]],null,"0","0","10"]') });
    expect(refusal(() => decodeIndexedPosting(indexKey, opening.replace('1,2,', '1,3,')))).toBe(`damaged account index entry ${indexKey} record: balance is not one of 3 values`);
    expect(refusal(() => decodeIndexedPosting(indexKey, opening.replace('"0","0","10"', '"0","0",10')))).toBe(`damaged account index entry ${indexKey} record: encumbered is not decimal text`);
    expect(refusal(() => decodeIndexedPosting(indexKey, opening.replace('[5,', '["5",')))).toBe(`damaged account index entry ${indexKey} record: at is not an integer`);
    expect(refusal(() => recordJsonList('[{"ref":"op_1"},7]', 'event chunk'))).toBe('damaged event chunk record: is not a list of JSON objects');
    expect(recordJsonList('[{"ref":"op_1"}]', 'event chunk')).toEqual([{ ref: 'op_1' }]);
  });
});
