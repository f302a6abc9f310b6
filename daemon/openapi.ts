/**
 * The OpenAPI 3.1 document, generated from the routes' own JSON Schemas (collected
 * as routes are registered), so the document and the validation cannot drift.
 */
import type { RouteOptions } from 'fastify';
import { pathParamLengthMax } from './http/replies.js';
import { type Schema, refusalSchema } from './http/schemas.js';
import { codesOfStatus } from './http/status.js';

interface RouteSchema {
  summary?: string;
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

function parameters(where: 'header' | 'path' | 'query', schema: Schema | undefined): Schema[] {
  if (!schema) return [];
  const properties = (schema.properties ?? {}) as Record<string, Schema>;
  const required = new Set((schema.required ?? []) as string[]);
  // A path parameter longer than the router matches is refused before the route runs.
  const bounded = (s: Schema) => (where === 'path' ? { maxLength: pathParamLengthMax, ...s } : s);
  return Object.entries(properties).map(([name, s]) => ({ name, in: where, required: where === 'path' || required.has(name), schema: bounded(s) }));
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

function refusalDescription(status: number): string {
  const codes = codesOfStatus(status).join(', ');
  if (status !== 400) return `refusal {error, description}: ${codes}`;
  return `refusal {error, description}: ${codes}; ERR-MalformedCommand also for ${frameworkRefusals.join('; ')}`;
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
    const paths: Record<string, Record<string, Schema>> = {};
    for (const r of this.routes) {
      const path = r.url.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
      // Every route may be refused before it runs (malformed input, draining), whatever its own schema lists.
      const statuses = { ...r.schema.response, 400: refusalSchema, 503: refusalSchema };
      const responses = Object.fromEntries(
        Object.entries(statuses).map(([status, schema]) => [
          status,
          { description: status.startsWith('2') ? 'success' : refusalDescription(Number(status)), content: { 'application/json': { schema } } },
        ]),
      );
      paths[path] ??= {};
      paths[path]![r.method] = {
        summary: r.schema.summary,
        security: r.public ? [] : [{ bearer: [] }],
        parameters: [...parameters('path', r.schema.params), ...parameters('query', r.schema.querystring), ...parameters('header', r.schema.headers)],
        ...(r.schema.body ? { requestBody: { required: true, content: { 'application/json': { schema: r.schema.body } } } } : {}),
        responses,
      };
    }
    return {
      openapi: '3.1.0',
      info: { title: 'ledgerd', version },
      components: { securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } } },
      paths,
    };
  }
}
