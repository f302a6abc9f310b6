/**
 * The OpenAPI 3.1 document, generated from the routes' own JSON Schemas (collected
 * as routes are registered), so the document and the validation cannot drift.
 */
import type { RouteOptions } from 'fastify';
import type { Schema } from './http/schemas.js';

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
  return Object.entries(properties).map(([name, s]) => ({ name, in: where, required: where === 'path' || required.has(name), schema: s }));
}

export class OpenApi {
  private readonly routes: CollectedRoute[] = [];

  collect(route: RouteOptions): void {
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    for (const method of methods) {
      this.routes.push({ method: method.toLowerCase(), url: route.url, schema: (route.schema ?? {}) as RouteSchema, public: route.config?.public === true });
    }
  }

  document(version: string): Schema {
    const paths: Record<string, Record<string, Schema>> = {};
    for (const r of this.routes) {
      const path = r.url.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
      const responses = Object.fromEntries(
        Object.entries(r.schema.response ?? {}).map(([status, schema]) => [
          status,
          { description: status.startsWith('2') ? 'success' : 'refusal {error, description}', content: { 'application/json': { schema } } },
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
