/**
 * The wire shapes the CLI reads (spec 2, CONTRACT 4-5). Amounts are decimal strings and stay so:
 * the CLI never turns money into a JS number.
 */
export type Json = string | number | boolean | null | Json[] | { [key: string]: Json };

export interface ApiError {
  error: string;
  description: string;
}

export interface CommandResult {
  account?: string | null;
  identity?: string | null;
  party?: string | null;
  credential?: string | null;
  credentials?: string[];
  grant?: string | null;
  postings?: number[];
  [field: string]: Json | undefined;
}

export interface CommandReply {
  client_key: string;
  client_key_derived: boolean;
  operation_reference: string;
  terminal: boolean;
  class?: string;
  state?: string | null;
  reference?: Json;
  api_key?: string | null;
  result?: CommandResult;
}

export interface Move {
  from: string;
  to: string | null;
  amount: string;
  asset: string;
}

export interface OperationView {
  operation_reference: string;
  command: string;
  /** Who submitted it (absent from daemons older than this field), with which credential, for whom. */
  principal?: string;
  credential?: string;
  on_behalf_of?: string;
  /** What a transfer or reservation asks to move. */
  moves?: Move[];
  /** When a transfer or withdrawal must be decided by, or a reservation's hold expires (ms; absent for other commands and from older daemons). */
  deadline?: number;
  state: string;
  terminal: boolean;
  submitted_at: number;
  decided_at: number | null;
  client_key: string;
  reference?: Json;
  result?: CommandResult;
  error?: ApiError;
}

export interface Balances {
  available: string;
  reserved: string;
  encumbered: string;
}

export interface Authority {
  credential: string;
  grant: string | null;
  kind: string;
  on_behalf_of: string | null;
  principal: string;
}

/** An account view (spec endpoint 12). */
export interface AccountView {
  account: string;
  closed: boolean;
  custody: string;
  kind: string;
  status: string;
  opened_at: number;
  owner: string;
}

/** GET /v1/accounts?owner= (CONTRACT 11). */
export interface AccountListing {
  items: AccountView[];
  next?: string;
  view: number;
}

/** GET /v1/accounts/{account}/balances (CONTRACT 11). */
export interface AccountBalances {
  account: string;
  view: number;
  balances: ({ asset: string } & Balances)[];
}

export interface Movement {
  account: string;
  amount: string;
  asset: string;
  at: number;
  authorities: Authority[];
  balance: string;
  counterparty: string | null;
  direction: 'debit' | 'credit';
  kind: string;
  operation: string;
  reference?: Json;
  seq: number;
  status: string;
}

export interface MovementsPage {
  movements: Movement[];
  next?: string;
  view: number;
}

export interface Statement {
  account: string;
  asset: string;
  closed: boolean;
  from: number;
  to: number;
  from_seq: number;
  to_seq: number;
  opening: Balances;
  closing: Balances;
  movements: Movement[];
}

export interface TrialBalance {
  accounts: number;
  /** `layers`: the book's sum per layer (absent from daemons older than it); `debits`, `credits` with `gross=true`. */
  rows: { asset: string; openings: string; layers?: { available: string; reserved: string; encumbered: string }; debits?: string; credits?: string }[];
  unbalanced: { currency: number; layer: number }[];
  view: number;
  /** With `accounts=true`: a page of per-account lines. */
  accounts_page?: { items: TrialBalanceLine[]; next?: string; view: number };
}

/** One account's balance in one asset, every layer, and their sum. */
export interface TrialBalanceLine {
  account: string;
  asset: string;
  available: string;
  reserved: string;
  encumbered: string;
  balance: string;
}

export interface Asset {
  id: string;
  kind: string;
  precision: number;
  status: string;
  binding: string;
  location: string | null;
}

export interface Challenge {
  challenge: string;
  expires_at: number;
}

export interface Session {
  session: string;
  expires_at: number;
  principal: string;
  credential: string;
}

export interface Whoami {
  principal: string;
  credential: string;
  scheme: string;
  expires_at: number | null;
}

export type GrantSubject = { account: string } | 'delegated_accounts' | Record<string, Json>;

export interface GrantTerms {
  kind: string;
  principal: string;
  subject: GrantSubject;
  ops: string[];
  assets?: string[] | null;
  counterparties?: string[] | null;
  expires?: number | null;
  parent?: string | null;
  per_operation?: string | null;
  per_window?: { length: number; limit: string } | null;
}

export interface GrantListing {
  items: { grant: string; granted_at: number; grantor: string; revoked: number | null; terms: GrantTerms }[];
  identity?: string;
  account?: string;
  next?: string;
}

/** An item of GET /v1/ops/identities (docs/api.md, Operator listings). */
export interface OpsIdentity {
  identity: string;
  created_at: number;
  status: string;
  accounts: number;
}

/** An item of GET /v1/ops/reservations: a live hold. */
export interface OpsReservation {
  operation_reference: string;
  payer: string;
  amount: string;
  asset: string;
  deadline: number;
  holder: string;
  credential: string;
  on_behalf_of: string | null;
  reserved_at: number;
  reference?: Json;
}

/** An item of GET /v1/ops/grants: a grant listing's item and its state when read. */
export type OpsGrant = GrantListing['items'][number] & { state: string };

/** GET /v1/ops/members (CONTRACT 13). */
export interface MembersListing {
  items: { credential: string; name: string; role: string; scheme: string; added_at: number; added_by: string | null; removed_at: number | null }[];
}

/** GET /v1/ops/audit (CONTRACT 13). */
export interface AuditPage {
  items: { seq: number; at: number; member: string; credential: string; act: string; operation_reference?: string; proposal?: string; justification?: string; approval?: string }[];
  next?: string;
}

/** POST and GET /v1/ops/check: the online check of the served book (docs/operations.md). */
export interface BookCheck {
  state: 'none' | 'running' | 'consistent' | 'damaged' | 'incomplete' | 'failed';
  started_at?: number;
  finished_at?: number;
  accounts?: number;
  balances?: number;
  postings?: number;
  checkpoints?: number;
  view?: number;
  problem_count?: number;
  problems?: string[];
  reason?: string;
}

/** A proposal (CONTRACT 13): GET /v1/ops/proposals/{proposal}, and each item of the listing. */
/** GET /v1/ops/approvals/policy (CONTRACT 13). */
export interface ApprovalPolicy {
  rules: string[];
  issuanceAboveMinor: Record<string, string>;
  ttlMs: number;
}

export interface ProposalView {
  proposal: string;
  request: { method: string; path: string; body: unknown; on_behalf_of?: string };
  justification: string;
  proposer: string;
  proposed_at: number;
  state: string;
  decided_by?: string;
  decided_at?: number;
  reason?: string;
  operation_reference?: string;
}

export interface ProposalsPage {
  items: ProposalView[];
  next?: string;
}

export interface PartiesListing {
  items: { party: string; principals: { principal: string; tied_at: number }[]; registered_at: number }[];
}

/** Decided: the core has ruled on it (a reservation is decided at `Reserved`, before it is terminal). */
export const isDecided = (state: string | null | undefined): boolean => state !== undefined && state !== null && state !== 'Received';
