/**
 * The OpenAPI 3.1 document, generated from the routes' own JSON Schemas (collected
 * as routes are registered), so the document and the validation cannot drift.
 */
import type { RouteOptions } from 'fastify';
import { defaults } from './config.js';
import { pathParamLengthMax } from './http/replies.js';
import { type Schema, componentOf, nullableBaseOf, refusalSchema } from './http/schemas.js';
import { codesOfStatus } from './http/status.js';

/** A route's schema: what Fastify validates, and what only the document reads (Fastify ignores those members). */
interface RouteSchema {
  /** Stable name of the operation for generated clients; never derived from the path, so a path change does not rename it. */
  operationId?: string;
  summary?: string;
  /**
   * Query parameters of which exactly one is sent, grouped in the document as one form-exploded
   * object parameter (OpenAPI has no other way to say it); the handler refuses neither or both.
   */
  queryOneOf?: { readonly name: string; readonly members: readonly string[]; readonly description: string };
  headers?: Schema;
  params?: Schema;
  querystring?: Schema;
  body?: Schema;
  response?: Record<string, Schema>;
}

interface CollectedRoute {
  readonly method: string;
  readonly url: string;
  readonly schema: RouteSchema;
  readonly public: boolean;
}

/** Shared formats become `#/components/schemas/<name>`, each written once from its documented schema. */
class Components {
  readonly schemas: Record<string, Schema> = {};
  readonly responses: Record<string, Schema> = {};
  private readonly sources = new Map<string, Schema>();

  /** `value` with every shared schema in it replaced by a reference. */
  refer(value: unknown): unknown {
    if (Array.isArray(value)) return value.map((v) => this.refer(v));
    if (typeof value !== 'object' || value === null) return value;
    const schema = value as Schema;
    const shared = componentOf(schema);
    if (shared) {
      const source = this.sources.get(shared.name);
      if (source === undefined) {
        this.sources.set(shared.name, schema);
        this.schemas[shared.name] = this.refer(shared.documented) as Schema;
      } else if (source !== schema) {
        throw new Error(`two schemas share the component name ${shared.name}`);
      }
      return { $ref: `#/components/schemas/${shared.name}` };
    }
    const base = nullableBaseOf(schema);
    if (base && componentOf(base)) return { anyOf: [this.refer(base), { type: 'null' }] };
    return Object.fromEntries(Object.entries(schema).map(([k, v]) => [k, this.refer(v)]));
  }
}

function parameters(where: 'header' | 'path' | 'query', schema: Schema | undefined, components: Components, oneOf?: RouteSchema['queryOneOf']): Schema[] {
  if (!schema) return [];
  const properties = (schema.properties ?? {}) as Record<string, Schema>;
  const required = new Set((schema.required ?? []) as string[]);
  // A path parameter longer than the router matches is refused before the route runs (ids' own patterns are shorter).
  const bounded = (s: unknown) => (where === 'path' && !('$ref' in (s as Schema)) ? { maxLength: pathParamLengthMax, ...(s as Schema) } : s);
  const grouped = new Set(oneOf?.members ?? []);
  const single = Object.entries(properties)
    .filter(([name]) => !grouped.has(name))
    .map(([name, s]) => ({ name, in: where, required: where === 'path' || required.has(name), schema: bounded(components.refer(s)) }));
  if (!oneOf) return single;
  // Form-exploded: the object's one member is sent as its own query parameter (`?account=...`).
  const branches = oneOf.members.map((name) => ({ type: 'object', properties: { [name]: components.refer(properties[name]) }, required: [name], additionalProperties: false }));
  return [...single, { name: oneOf.name, in: 'query', required: true, style: 'form', explode: true, description: oneOf.description, schema: { oneOf: branches } }];
}

/**
 * Refusals made before any route runs, by Fastify's router and body parser or by Node
 * itself: each answers ERR-MalformedCommand (400) in the refusal shape.
 */
export const frameworkRefusals = [
  `a path parameter over ${pathParamLengthMax} characters`,
  'a path or query that is not valid percent-encoded UTF-8',
  'a body over bodyBytesMax, not application/json, empty, not JSON or not a JSON object',
  'a Content-Length that does not match the body',
  'a request line and headers over headerBytesMax',
  'a request not received whole within requestTimeoutMs',
  'an Expect header other than 100-continue',
  'a request that is not valid HTTP/1.1',
  'an unknown route or method',
];

/** Every operation may be refused before its handler runs (malformed input, draining) or fail unexpectedly. */
const everyRouteStatuses = [400, 500, 503];
/** Statuses the bearer check answers before a protected route runs. */
const protectedRouteStatuses = [401];

function refusalDescription(status: number): string {
  const codes = codesOfStatus(status).join(', ');
  if (status !== 400) return `refusal {error, description}: ${codes}`;
  return `refusal {error, description}: ${codes}; ERR-MalformedCommand also for ${frameworkRefusals.join('; ')}`;
}

/** A refusal response, shared as `#/components/responses/Refusal<status>`: the refusal shape, its `error` narrowed to the codes of that status (CONTRACT 6). */
function refusalResponse(status: number, components: Components): Schema {
  const name = `Refusal${status}`;
  if (!(name in components.responses)) {
    const schema = { allOf: [components.refer(refusalSchema), { type: 'object', properties: { error: { type: 'string', enum: codesOfStatus(status) } } }] };
    const retryAfter = status === 503 ? { headers: { 'Retry-After': { description: 'seconds to wait before retrying', schema: { type: 'integer', minimum: 0 } } } } : {};
    components.responses[name] = { description: refusalDescription(status), ...retryAfter, content: { 'application/json': { schema } } };
  }
  return { $ref: `#/components/responses/${name}` };
}

/** A success response: JSON unless the route's schema names its media types itself (`{content: {...}}`, as Fastify reads it). */
function successResponse(schema: Schema, components: Components): Schema {
  if ('content' in schema) return { description: (schema.description as string | undefined) ?? 'success', content: components.refer(schema.content) };
  return { description: 'success', content: { 'application/json': { schema: components.refer(schema) } } };
}

export class OpenApi {
  private readonly routes: CollectedRoute[] = [];

  collect(route: RouteOptions): void {
    // The document describes the /v1 API; GET /metrics is for Prometheus, in its own format.
    if (!route.url.startsWith('/v1/')) return;
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    for (const method of methods) {
      this.routes.push({ method: method.toLowerCase(), url: route.url, schema: (route.schema ?? {}) as RouteSchema, public: route.config?.public === true });
    }
  }

  document(version: string): Schema {
    const components = new Components();
    const paths: Record<string, Record<string, Schema>> = {};
    const operationIds = new Set<string>();
    for (const r of this.routes) {
      const path = r.url.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
      const { operationId } = r.schema;
      if (operationId === undefined || operationIds.has(operationId)) throw new Error(`${r.method} ${r.url} needs an operationId of its own`);
      operationIds.add(operationId);
      const own = Object.entries(r.schema.response ?? {}).filter(([status]) => status.startsWith('2'));
      // Whatever the route's own schema lists, every refusal status it can meet is documented with the refusal shape.
      const refusalStatuses = new Set([
        ...Object.keys(r.schema.response ?? {}).filter((status) => !status.startsWith('2')).map(Number),
        ...everyRouteStatuses,
        ...(r.public ? [] : protectedRouteStatuses),
      ]);
      const responses = {
        ...Object.fromEntries(own.map(([status, schema]) => [status, successResponse(schema, components)])),
        ...Object.fromEntries([...refusalStatuses].sort().map((status) => [String(status), refusalResponse(status, components)])),
      };
      paths[path] ??= {};
      paths[path]![r.method] = {
        operationId,
        summary: r.schema.summary,
        security: r.public ? [] : [{ bearer: [] }],
        parameters: [
          ...parameters('path', r.schema.params, components),
          ...parameters('query', r.schema.querystring, components, r.schema.queryOneOf),
          ...parameters('header', r.schema.headers, components),
        ],
        ...(r.schema.body ? { requestBody: { required: true, content: { 'application/json': { schema: components.refer(r.schema.body) } } } } : {}),
        responses,
      };
    }
    return {
      openapi: '3.1.0',
      info: {
        title: 'ledgerd',
        version,
        description: 'The /v1 API of ledgerd. Refusals are `{error, description}` with the HTTP status of the code (CONTRACT 6).',
        license: { name: 'UNLICENSED', identifier: 'UNLICENSED' },
      },
      servers: [
        {
          url: 'http://{listen}',
          description: 'a ledgerd, at the address it listens on (--listen)',
          variables: { listen: { default: defaults.listen, description: 'HOST:PORT' } },
        },
      ],
      components: { schemas: components.schemas, responses: components.responses, securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } } },
      paths,
    };
  }
}
