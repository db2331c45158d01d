import type { INestApplication } from '@nestjs/common';
import { DocumentBuilder, OpenAPIObject, SwaggerModule } from '@nestjs/swagger';
import { BEARER_SCHEME } from '../auth/api-key-auth.decorator.js';
import type { AppConfig } from '../config/config.js';
import { documentRateLimitHeaders } from '../rate-limit/rate-limit.openapi.js';

/**
 * The OpenAPI document, generated from the code's decorators. What decorators cannot say
 * (the named `Pets` array schema) is added here; test/openapi.snapshot.json pins the result.
 */
export function buildOpenApiDocument(app: INestApplication, config: AppConfig): OpenAPIObject {
  const builder = new DocumentBuilder()
    .setTitle('Animal Store API')
    .setDescription('A catalogue of animals offered in a store: list animals, add them and fetch one.')
    .setVersion('1.0.0')
    .addServer(config.publicBaseUrl, 'Production')
    .addServer(config.stagingBaseUrl, 'Staging')
    .addBearerAuth(
      {
        type: 'http',
        scheme: 'bearer',
        // DocumentBuilder would say JWT; these are opaque API keys (see src/auth/api-key-format.ts).
        bearerFormat: 'API key',
        description: 'An API key of this service (`ask_…`), sent as `Authorization: Bearer <key>`.',
      },
      BEARER_SCHEME,
    );
  const doc = SwaggerModule.createDocument(app, builder.build(), {
    operationIdFactory: (_controller, method) => method,
  });
  documentRateLimitHeaders(doc);
  // Both servers end in the version segment (contract, "Addresses and versions"), so paths
  // are written relative to it: /pets, not /v1/pets.
  doc.paths = Object.fromEntries(
    Object.entries(doc.paths).map(([p, item]) => [p.startsWith('/v1/') ? p.slice(3) : p, item]),
  );
  doc.components ??= {};
  doc.components.schemas ??= {};
  doc.components.schemas.Pets = { type: 'array', items: { $ref: '#/components/schemas/Pet' } };
  return doc;
}

/** Serves the document at /openapi.json and Swagger UI at /docs. */
export function mountOpenApi(app: INestApplication, config: AppConfig): OpenAPIObject {
  const doc = buildOpenApiDocument(app, config);
  SwaggerModule.setup('docs', app, doc, { jsonDocumentUrl: 'openapi.json', raw: ['json'] });
  return doc;
}
