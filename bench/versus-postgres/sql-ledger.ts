/**
 * A double-entry ledger in PostgreSQL, built as SQL ledgers are: an `accounts` table
 * (one row per account and asset, the balance held above a floor by a check
 * constraint), a `transfers` table (idempotent on a unique key), an `entries` table
 * (one row per side of each leg, signed, a transfer's entries summing to zero), and a
 * PL/pgSQL `transfer` function that takes both account rows FOR UPDATE in a
 * deterministic order (so opposite transfers never deadlock), checks funds, writes the
 * entries and moves the balances, in one transaction. Amounts are bigint in SQL and
 * bigint in JavaScript (the driver returns int8 as text).
 */
import type pg from 'pg';

export const schemaSql = `
CREATE TABLE accounts (
  id text NOT NULL,
  asset text NOT NULL,
  balance bigint NOT NULL DEFAULT 0,
  -- The lowest balance allowed: 0 for a customer, minus its limit for a treasury.
  floor bigint NOT NULL DEFAULT 0,
  PRIMARY KEY (id, asset),
  CONSTRAINT balance_above_floor CHECK (balance >= floor)
);

CREATE TABLE transfers (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  idempotency_key text NOT NULL UNIQUE,
  from_account text NOT NULL,
  to_account text NOT NULL,
  asset text NOT NULL,
  amount bigint NOT NULL CHECK (amount > 0),
  created_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE entries (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  transfer_id bigint NOT NULL REFERENCES transfers (id),
  account_id text NOT NULL,
  asset text NOT NULL,
  -- Signed: negative debits the account, positive credits it.
  amount bigint NOT NULL CHECK (amount <> 0),
  FOREIGN KEY (account_id, asset) REFERENCES accounts (id, asset)
);
CREATE INDEX entries_by_account ON entries (account_id, asset, id);

-- Errors the callers map: LD001 insufficient funds, LD002 key reused for another
-- transfer, LD003 unknown account, 22023 bad argument.
CREATE FUNCTION transfer(p_from text, p_to text, p_asset text, p_amount bigint, p_key text)
RETURNS TABLE (transfer_id bigint, replayed boolean)
LANGUAGE plpgsql AS $$
DECLARE
  v_id bigint;
  v_prior transfers%ROWTYPE;
  v_from_balance bigint;
  v_from_floor bigint;
BEGIN
  IF p_amount IS NULL OR p_amount <= 0 THEN
    RAISE EXCEPTION 'amount must be positive' USING ERRCODE = '22023';
  END IF;
  IF p_from = p_to THEN
    RAISE EXCEPTION 'a transfer needs two accounts' USING ERRCODE = '22023';
  END IF;

  -- The key first: a concurrent twin waits on the unique index until this one commits
  -- (and then replays it) or rolls back (and then runs itself).
  INSERT INTO transfers (idempotency_key, from_account, to_account, asset, amount)
  VALUES (p_key, p_from, p_to, p_asset, p_amount)
  ON CONFLICT (idempotency_key) DO NOTHING
  RETURNING id INTO v_id;
  IF v_id IS NULL THEN
    SELECT * INTO STRICT v_prior FROM transfers WHERE idempotency_key = p_key;
    IF (v_prior.from_account, v_prior.to_account, v_prior.asset, v_prior.amount)
       IS DISTINCT FROM (p_from, p_to, p_asset, p_amount) THEN
      RAISE EXCEPTION 'idempotency key reused for another transfer' USING ERRCODE = 'LD002';
    END IF;
    RETURN QUERY SELECT v_prior.id, true;
    RETURN;
  END IF;

  -- Both rows, lower id first: two transfers between the same accounts in opposite
  -- directions queue instead of deadlocking.
  PERFORM 1 FROM accounts WHERE id = LEAST(p_from, p_to) AND asset = p_asset FOR UPDATE;
  PERFORM 1 FROM accounts WHERE id = GREATEST(p_from, p_to) AND asset = p_asset FOR UPDATE;

  SELECT balance, floor INTO v_from_balance, v_from_floor FROM accounts WHERE id = p_from AND asset = p_asset;
  IF NOT FOUND OR NOT EXISTS (SELECT 1 FROM accounts WHERE id = p_to AND asset = p_asset) THEN
    RAISE EXCEPTION 'unknown account' USING ERRCODE = 'LD003';
  END IF;
  IF v_from_balance - p_amount < v_from_floor THEN
    RAISE EXCEPTION 'insufficient funds' USING ERRCODE = 'LD001';
  END IF;

  UPDATE accounts SET balance = balance - p_amount WHERE id = p_from AND asset = p_asset;
  UPDATE accounts SET balance = balance + p_amount WHERE id = p_to AND asset = p_asset;
  INSERT INTO entries (transfer_id, account_id, asset, amount)
  VALUES (v_id, p_from, p_asset, -p_amount), (v_id, p_to, p_asset, p_amount);
  RETURN QUERY SELECT v_id, false;
END
$$;

-- A batch in one call over arrays, decided item by item as ledgerd decides a batch's
-- commands: every account the batch touches locked first, in id order (concurrent batches
-- queue instead of deadlocking), then each transfer in its own subtransaction, so a refused
-- one is rolled back alone and reported by its SQLSTATE.
CREATE FUNCTION transfer_batch(p_from text[], p_to text[], p_asset text[], p_amount bigint[], p_key text[])
RETURNS TABLE (item int, transfer_id bigint, replayed boolean, refusal text)
LANGUAGE plpgsql AS $$
DECLARE
  v_n int := coalesce(array_length(p_key, 1), 0);
BEGIN
  IF array_length(p_from, 1) IS DISTINCT FROM v_n OR array_length(p_to, 1) IS DISTINCT FROM v_n
     OR array_length(p_asset, 1) IS DISTINCT FROM v_n OR array_length(p_amount, 1) IS DISTINCT FROM v_n THEN
    RAISE EXCEPTION 'arrays of different lengths' USING ERRCODE = '22023';
  END IF;
  PERFORM 1 FROM accounts a
    WHERE (a.id, a.asset) IN (SELECT unnest(p_from || p_to), unnest(p_asset || p_asset))
    ORDER BY a.id, a.asset FOR UPDATE;
  FOR i IN 1 .. v_n LOOP
    BEGIN
      RETURN QUERY SELECT i, t.transfer_id, t.replayed, NULL::text FROM transfer(p_from[i], p_to[i], p_asset[i], p_amount[i], p_key[i]) t;
    EXCEPTION WHEN OTHERS THEN
      RETURN QUERY SELECT i, NULL::bigint, NULL::boolean, SQLSTATE::text;
    END;
  END LOOP;
END
$$;
`;

/** The call, as a named (prepared once per connection) statement. */
const transferStatement = 'SELECT transfer_id, replayed FROM transfer($1, $2, $3, $4, $5)';

export interface TransferResult {
  readonly transferId: bigint;
  readonly replayed: boolean;
}

/** One transfer, decided and committed (fsync'd under synchronous_commit) when this resolves. */
export async function transfer(db: pg.Pool | pg.ClientBase, from: string, to: string, asset: string, amountMinor: bigint, idempotencyKey: string): Promise<TransferResult> {
  const result = await db.query<{ transfer_id: string; replayed: boolean }>({ name: 'ledger-transfer', text: transferStatement, values: [from, to, asset, amountMinor.toString(), idempotencyKey] });
  const row = result.rows[0]!;
  return { transferId: BigInt(row.transfer_id), replayed: row.replayed };
}

export interface BatchItem {
  readonly from: string;
  readonly to: string;
  readonly asset: string;
  readonly amountMinor: bigint;
  readonly idempotencyKey: string;
}

/** A batch's outcome per item: the transfer, or the SQLSTATE that refused it. */
export type BatchOutcome = TransferResult | { readonly refusal: string };

/** The batch in one call, committed (fsync'd) when this resolves; items refused alone. */
export async function transferBatch(db: pg.Pool | pg.ClientBase, items: readonly BatchItem[]): Promise<BatchOutcome[]> {
  const result = await db.query<{ transfer_id: string | null; replayed: boolean | null; refusal: string | null }>({
    name: 'ledger-transfer-batch',
    text: 'SELECT item, transfer_id, replayed, refusal FROM transfer_batch($1, $2, $3, $4, $5) ORDER BY item',
    values: [items.map((i) => i.from), items.map((i) => i.to), items.map((i) => i.asset), items.map((i) => i.amountMinor.toString()), items.map((i) => i.idempotencyKey)],
  });
  return result.rows.map((row) => (row.refusal !== null || row.transfer_id === null ? { refusal: row.refusal ?? 'unknown' } : { transferId: BigInt(row.transfer_id), replayed: row.replayed === true }));
}

/** The SQL errors `transfer` raises for a refused transfer (anything else is a fault). */
export const refusalCodes: Readonly<Record<string, { readonly status: number; readonly description: string }>> = {
  LD001: { status: 409, description: 'insufficient funds' },
  LD002: { status: 409, description: 'idempotency key reused for another transfer' },
  LD003: { status: 404, description: 'unknown account' },
  '22023': { status: 400, description: 'bad argument' },
  '22003': { status: 409, description: 'a balance would leave bigint range' },
};

export const treasuryAccount = 'did:ledger:acct:treasury-USD';

/**
 * Creates the schema and opens `accounts.length` customer accounts in USD, each funded
 * with `fundingMinor` from a treasury whose floor covers exactly that, through the
 * transfer function, in one transaction.
 */
export async function installFundedLedger(client: pg.ClientBase, accounts: readonly string[], fundingMinor: bigint): Promise<void> {
  await client.query('BEGIN');
  try {
    await client.query(schemaSql);
    await client.query('INSERT INTO accounts (id, asset, floor) VALUES ($1, $2, $3)', [treasuryAccount, 'USD', (-fundingMinor * BigInt(accounts.length)).toString()]);
    await client.query("INSERT INTO accounts (id, asset) SELECT unnest($1::text[]), 'USD'", [accounts]);
    await client.query("SELECT transfer($1, id, 'USD', $2, 'opening:' || id) FROM accounts WHERE id <> $1 ORDER BY id", [treasuryAccount, fundingMinor.toString()]);
    await client.query('COMMIT');
  } catch (error) {
    await client.query('ROLLBACK');
    throw error;
  }
}

export interface BookCheck {
  /** Sum of all balances: zero in a balanced book. */
  readonly balancesMinor: bigint;
  /** Transfers whose entries do not sum to zero or that do not have exactly two. */
  readonly unbalancedTransfers: bigint;
  /** Accounts whose balance is not the sum of their entries. */
  readonly driftedAccounts: bigint;
  readonly transfers: bigint;
}

/** The double-entry invariants, read from one snapshot. */
export async function checkBook(db: pg.Pool | pg.ClientBase): Promise<BookCheck> {
  const { rows } = await db.query<Record<'balances' | 'unbalanced' | 'drifted' | 'transfers', string>>(`
    SELECT
      (SELECT coalesce(sum(balance), 0) FROM accounts) AS balances,
      (SELECT count(*) FROM (SELECT transfer_id FROM entries GROUP BY transfer_id HAVING sum(amount) <> 0 OR count(*) <> 2) t) AS unbalanced,
      (SELECT count(*) FROM accounts a WHERE a.balance <> (SELECT coalesce(sum(e.amount), 0) FROM entries e WHERE e.account_id = a.id AND e.asset = a.asset)) AS drifted,
      (SELECT count(*) FROM transfers) AS transfers`);
  const row = rows[0]!;
  return { balancesMinor: BigInt(row.balances), unbalancedTransfers: BigInt(row.unbalanced), driftedAccounts: BigInt(row.drifted), transfers: BigInt(row.transfers) };
}
