import type { INestApplication } from '@nestjs/common';
import { DocumentBuilder, OpenAPIObject, SwaggerModule } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { BEARER_SCHEME } from '../auth/api-key-auth.decorator.js';
import { PLAN_LIMITS } from '../api-keys/plans.js';
import { REQUEST_ID_HEADER } from '../http/request-id.js';
import { ApiError } from '../errors/api-error.js';
import { EXAMPLE_REQUEST_ID } from '../errors/api-responses.decorator.js';
import { stringifyJson } from '../json/json-codec.js';
import type { PublicUrlsConfig } from '../config/public-urls.config.js';
import { documentRateLimitHeaders, RATE_LIMIT_HEADER_DOCS } from '../rate-limit/rate-limit.openapi.js';
import { DOCS_PATH, OPENAPI_PATH } from './api-index.controller.js';

/**
 * The operations' tags (@ApiTags on the controllers), declared with a description as linters
 * ask; the lint test fails when a controller uses a tag not declared here.
 */
const TAGS: Record<string, string> = {
  pets: 'Animals offered in the store.',
  'rate-limits': "The caller's own rate limits, read without spending them.",
};

/**
 * Who answers for the API and under which terms (info.contact, info.license). The service is
 * proprietary (package.json: UNLICENSED) and its owner has no published addresses yet, so these
 * are placeholders on the reserved `.example` domain (RFC 2606): replace them before publishing.
 */
const CONTACT = { name: 'Animal Store API team', email: 'api@animal-store.example' };
const LICENSE = { name: 'Proprietary: all rights reserved', url: 'https://animal-store.example/terms' };

const numberFormat = new Intl.NumberFormat('en-US');

/**
 * info.description: what a newcomer at /docs needs before the first call. The plan table is
 * written from PLAN_LIMITS, the limits the service enforces, and the header list from the
 * rate-limit header docs, so neither can drift from the code.
 */
export function apiDescription(): string {
  const plans = Object.entries(PLAN_LIMITS).map(
    ([plan, l]) => `| ${plan} | ${numberFormat.format(l.perMinute)} | ${numberFormat.format(l.perDay)} |`,
  );
  return [
    'A catalogue of animals offered in a store: list animals, add them and fetch one.',
    '',
    '## Getting an API key',
    '',
    'Every operation needs an API key, sent as `Authorization: Bearer <key>`. Keys are issued by the operator of the deployment with the key tool (`npm run apikey -- create --name "<who>" --plan <plan>`), which shows the key once. A local instance on the embedded database prints a free-plan development key at its first start. A missing key is 401 `missing_api_key`, an unknown or revoked one 401 `invalid_api_key`, an expired one 401 `api_key_expired`.',
    '',
    '## Plans and limits',
    '',
    "Each key has a plan; each plan allows a number of requests per minute and per day (UTC), counted across all operations. Requests without a valid key are counted per client address at the free plan's rates.",
    '',
    '| Plan | Per minute | Per day |',
    '|---|---|---|',
    ...plans,
    '| enterprise | agreed per key | agreed per key |',
    '',
    'Over a limit the answer is 429 `rate_limit_exceeded` with `Retry-After` (seconds). A key that keeps calling while limited is banned for a while: 429 `api_key_temporarily_banned`, `Retry-After` until the ban ends.',
    '',
    '## Headers',
    '',
    `- \`${REQUEST_ID_HEADER}\` on every response: the request's id (yours when you send a well-formed one); quote it when reporting a problem.`,
    `- ${Object.keys(RATE_LIMIT_HEADER_DOCS)
      .map((h) => `\`${h}\``)
      .join(', ')} on every response: the state of your limits.`,
    '- `Retry-After` on 429 and 503: seconds to wait before retrying.',
    '- `Location` on 201; `Idempotency-Key` (request) makes a create safe to retry, and its replay carries `Idempotent-Replayed: true`.',
    '- `Deprecation`, `Sunset` and `Link` (rel="successor-version") on every response of the deprecated `getPet`.',
    '',
    'Errors are `application/json` `{"code","message","status"}` with a stable `code`; each response below lists its codes with an example.',
    '',
    '## Documentation',
    '',
    `This page is served at \`${DOCS_PATH}\`, the document at \`${OPENAPI_PATH}\`; \`GET /\` and \`GET /v1\` point to both. Identifiers are int64: read them with a JSON parser that keeps big integers.`,
  ].join('\n');
}

/** The header every response carries (src/http/request-id.ts). */
const REQUEST_ID_DOC = {
  description:
    "The request's id: the incoming X-Request-Id when well formed (`[A-Za-z0-9._-]{1,128}`), else a new UUID. Quote it when reporting a problem.",
  schema: { type: 'string', example: EXAMPLE_REQUEST_ID },
};

/** The headers every response of a deprecated operation carries (src/deprecation/deprecation.ts). */
const DEPRECATION_HEADER_DOCS = {
  Deprecation: {
    description: 'RFC 9745: when the operation was deprecated, as a structured date (`@` and Unix seconds).',
    schema: { type: 'string', example: '@1795305600' },
  },
  Sunset: {
    description: 'RFC 8594: when the operation is removed (it answers 410 `gone` from then on).',
    schema: { type: 'string', example: 'Thu, 05 Dec 2030 00:00:00 GMT' },
  },
  SuccessorLink: {
    description: 'RFC 8288: the operation to use instead, `rel="successor-version"`.',
    schema: { type: 'string', example: '<https://api.example.test/v1/pets>; rel="successor-version"' },
  },
};

type Operation = { deprecated?: boolean; responses?: Record<string, { headers?: Record<string, unknown> }> };

/**
 * Declares the headers the edge and the deprecation guard put on responses: X-Request-Id on
 * every response, and Deprecation, Sunset and the successor Link on every response of a
 * deprecated operation, as shared components referenced from each response.
 */
function documentCommonHeaders(doc: OpenAPIObject): void {
  doc.components ??= {};
  doc.components.headers = { ...doc.components.headers, RequestId: REQUEST_ID_DOC, ...DEPRECATION_HEADER_DOCS };
  for (const item of Object.values(doc.paths)) {
    for (const operation of Object.values(item as Record<string, Operation>)) {
      if (typeof operation !== 'object' || !operation?.responses) continue;
      // A controller-level response is one object shared by its operations: each gets its own copy.
      for (const [status, response] of Object.entries(operation.responses)) {
        const headers: Record<string, unknown> = { [REQUEST_ID_HEADER]: { $ref: '#/components/headers/RequestId' } };
        if (operation.deprecated) {
          headers.Deprecation = { $ref: '#/components/headers/Deprecation' };
          headers.Sunset = { $ref: '#/components/headers/Sunset' };
          headers.Link = { $ref: '#/components/headers/SuccessorLink' };
        }
        operation.responses[status] = { ...response, headers: { ...headers, ...response.headers } };
      }
    }
  }
}

/**
 * The OpenAPI document, generated from the code's decorators. What decorators cannot say
 * (the named `Pets` array schema, the headers every response carries) is added here;
 * test/openapi.snapshot.json pins the result, and test/docs/openapi-lint.e2e-spec.ts lints it as
 * served with Redocly's and Spectral's rules.
 *
 * It holds int64 bounds as bigints (9223372036854775807 has no exact double), so it must be
 * written with the lossless writer (stringifyJson), never JSON.stringify.
 */
export function buildOpenApiDocument(app: INestApplication, config: PublicUrlsConfig): OpenAPIObject {
  const builder = new DocumentBuilder()
    .setTitle('Animal Store API')
    .setDescription(apiDescription())
    .setVersion('1.0.0')
    .setContact(CONTACT.name, '', CONTACT.email)
    .setLicense(LICENSE.name, LICENSE.url)
    .addServer(config.publicBaseUrl, 'Production')
    .addServer(config.stagingBaseUrl, 'Staging')
    .addBearerAuth(
      {
        type: 'http',
        scheme: 'bearer',
        // DocumentBuilder would say JWT; these are opaque API keys (see src/api-keys/api-key-format.ts).
        bearerFormat: 'API key',
        description:
          'An API key of this service (`ask_…`), sent as `Authorization: Bearer <key>`. A key holds scopes: `pets:read` (listPets, getPet) and `pets:write` (createPet); each operation lists the scope it needs in `x-required-scopes`, and a key without it gets 403 `insufficient_scope`.',
      },
      BEARER_SCHEME,
    );
  for (const [name, description] of Object.entries(TAGS)) builder.addTag(name, description);
  const doc = SwaggerModule.createDocument(app, builder.build(), {
    operationIdFactory: (_controller, method) => method,
  });
  doc.info.contact = { ...CONTACT }; // DocumentBuilder writes an empty url
  documentRateLimitHeaders(doc);
  documentCommonHeaders(doc);
  // Both servers end in the version segment (docs/api.md, "Addresses and versions"), so paths
  // are written relative to it: /pets, not /v1/pets.
  doc.paths = Object.fromEntries(
    Object.entries(doc.paths).map(([p, item]) => [p.startsWith('/v1/') ? p.slice(3) : p, item]),
  );
  doc.components ??= {};
  doc.components.schemas ??= {};
  doc.components.schemas.Pets = { type: 'array', items: { $ref: '#/components/schemas/Pet' } };
  for (const schema of Object.values(doc.components.schemas)) unwrapSingleRefAllOf(schema);
  return doc;
}

/** The origins of the documented servers, which Try-it-out on /docs may call (http/http-edge.ts). */
export function documentedOrigins(config: PublicUrlsConfig): string[] {
  return [...new Set([config.publicBaseUrl, config.stagingBaseUrl].map((url) => new URL(url).origin))];
}

/**
 * The server Swagger UI offers first: `/v1` on the origin the page was opened at, whatever host
 * name the browser used (a relative URL resolves against the page), so Try-it-out calls the
 * instance serving the page. The documented servers follow it.
 */
export const THIS_SERVER = { url: '/v1', description: 'This server (the origin this page was opened at)' };

/**
 * @nestjs/swagger writes a property typed by a named enum as `allOf: [{$ref}]`, so that siblings
 * such as `default` are not ignored next to a `$ref` (OpenAPI 3.0). A one-element allOf is
 * what linters call an illogical composition: without siblings it becomes the `$ref` itself;
 * with siblings they move into a second allOf element, which keeps them and the reference.
 */
export function unwrapSingleRefAllOf(schema: unknown): void {
  if (typeof schema !== 'object' || schema === null) return;
  const properties = (schema as { properties?: Record<string, Record<string, unknown>> }).properties ?? {};
  for (const [name, property] of Object.entries(properties)) {
    const allOf = property.allOf as unknown[] | undefined;
    if (!Array.isArray(allOf) || allOf.length !== 1) continue;
    const { allOf: _single, ...siblings } = property;
    properties[name] =
      Object.keys(siblings).length === 0 ? (allOf[0] as Record<string, unknown>) : { allOf: [allOf[0], siblings] };
  }
}

/**
 * What the Swagger UI page at /docs loads (its HTML links these), relative to /docs. The rest of
 * the swagger-ui-dist folder that SwaggerModule serves (its package.json, source maps, other
 * bundles, the stock index.html) is answered 404 route_not_found.
 */
const DOCS_FILES = new Set([
  '/',
  '/swagger-ui.css',
  '/swagger-ui-bundle.js',
  '/swagger-ui-standalone-preset.js',
  '/swagger-ui-init.js',
  '/favicon-32x32.png',
  '/favicon-16x16.png',
]);

function onlyDocsFiles(req: Request, res: Response, next: () => void): void {
  if (DOCS_FILES.has(req.path)) return next();
  const error = new ApiError('route_not_found', `No route matches ${req.method} /docs${req.path}.`);
  // The edge has given every request its id before this runs.
  res
    .status(404)
    .type('application/json')
    .send(stringifyJson(error.toBody(req.id ?? '')));
}

/**
 * Serves the document at /openapi.json, written losslessly (int64 bounds as exact numbers),
 * and Swagger UI at /docs. The UI embeds its copy with JSON.stringify, which has no bigint, so
 * it gets the document as a browser's JSON.parse would read /openapi.json anyway, with
 * THIS_SERVER before the documented servers.
 */
export function mountOpenApi(app: INestApplication, config: PublicUrlsConfig): OpenAPIObject {
  const doc = buildOpenApiDocument(app, config);
  const text = stringifyJson(doc);
  const forUi = JSON.parse(text) as OpenAPIObject;
  forUi.servers = [THIS_SERVER, ...(forUi.servers ?? [])];
  app.use(DOCS_PATH, onlyDocsFiles);
  SwaggerModule.setup(DOCS_PATH.slice(1), app, forUi, { raw: false });
  app.getHttpAdapter().get(OPENAPI_PATH, (_req: Request, res: Response) => res.type('application/json').send(text));
  return doc;
}
