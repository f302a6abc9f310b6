/**
 * The matched route's options, read once per request. Fastify's `request.routeOptions` builds a
 * new object at every read (and asks the router whether versions are constrained), and a
 * command's request reads it in several hooks: authentication, the role check, the approvals
 * gate, the submission, the metrics (~0.5% of the main thread under bench/http).
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';

type RouteOptionsOf = FastifyRequest['routeOptions'];

declare module 'fastify' {
  interface FastifyRequest {
    /** `routeOptions` once read (routeOf); null before. */
    routeRead: RouteOptionsOf | null;
  }
}

/** Decorates requests with the place `routeOf` keeps what it read. */
export function rememberRoutes(app: FastifyInstance): void {
  app.decorateRequest('routeRead', null);
}

/** `request.routeOptions`, read once per request. */
export function routeOf(request: FastifyRequest): RouteOptionsOf {
  return (request.routeRead ??= request.routeOptions);
}
