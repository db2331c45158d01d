import type { INestApplication } from '@nestjs/common';
import { DocumentBuilder, OpenAPIObject, SwaggerModule } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { BEARER_SCHEME } from '../auth/api-key-auth.decorator.js';
import { stringifyJson } from '../json/json-codec.js';
import type { PublicUrlsConfig } from '../config/public-urls.config.js';
import { documentRateLimitHeaders } from '../rate-limit/rate-limit.openapi.js';

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

/**
 * The OpenAPI document, generated from the code's decorators. What decorators cannot say
 * (the named `Pets` array schema) is added here; test/openapi.snapshot.json pins the result,
 * and test/openapi-lint.e2e-spec.ts lints it as served with Redocly's and Spectral's rules.
 *
 * It holds int64 bounds as bigints (9223372036854775807 has no exact double), so it must be
 * written with the lossless writer (stringifyJson), never JSON.stringify.
 */
export function buildOpenApiDocument(app: INestApplication, config: PublicUrlsConfig): OpenAPIObject {
  const builder = new DocumentBuilder()
    .setTitle('Animal Store API')
    .setDescription('A catalogue of animals offered in a store: list animals, add them and fetch one.')
    .setVersion('1.0.0')
    .setContact(CONTACT.name, '', CONTACT.email)
    .setLicense(LICENSE.name, LICENSE.url)
    .addServer(config.publicBaseUrl, 'Production')
    .addServer(config.stagingBaseUrl, 'Staging')
    .addBearerAuth(
      {
        type: 'http',
        scheme: 'bearer',
        // DocumentBuilder would say JWT; these are opaque API keys (see src/auth/api-key-format.ts).
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

/**
 * @nestjs/swagger writes a property typed by a named enum as `allOf: [{$ref}]`, so that siblings
 * such as `default` are not ignored next to a `$ref` (OpenAPI 3.0). A one-element allOf is
 * what linters call an illogical composition: without siblings it becomes the `$ref` itself;
 * with siblings they move into a second allOf element, which keeps them and the reference.
 */
function unwrapSingleRefAllOf(schema: unknown): void {
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
 * Serves the document at /openapi.json, written losslessly (int64 bounds as exact numbers),
 * and Swagger UI at /docs. The UI embeds its copy with JSON.stringify, which has no bigint, so
 * it gets the document as a browser's JSON.parse would read /openapi.json anyway.
 */
export function mountOpenApi(app: INestApplication, config: PublicUrlsConfig): OpenAPIObject {
  const doc = buildOpenApiDocument(app, config);
  const text = stringifyJson(doc);
  const forUi = JSON.parse(text) as OpenAPIObject;
  SwaggerModule.setup('docs', app, forUi, { raw: false });
  app.getHttpAdapter().get('/openapi.json', (_req: Request, res: Response) => res.type('application/json').send(text));
  return doc;
}
