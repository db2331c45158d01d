import { Controller, Get, type INestApplication } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import { DocumentBuilder, OpenAPIObject, SwaggerModule } from '@nestjs/swagger';
import { ADMIN_ERROR_CODES, ERROR_CODES } from '../errors/api-error.js';
import { REQUEST_ID_HEADER } from '../http/request-id.js';
import { unwrapSingleRefAllOf } from '../openapi/openapi.js';
import { AdminPublic } from './admin-auth.guard.js';
import { ADMIN_BEARER_SCHEME, ADMIN_OPENAPI_PATH } from './admin-paths.js';

const TAGS: Record<string, string> = {
  keys: 'API keys: issue, list, show, change, roll, revoke.',
  usage: 'Usage over all keys: totals per hour or day, and the busiest keys.',
  audit: 'The audit log of changes to API keys, admin tokens and webhook endpoints.',
  webhooks: 'Webhook endpoints, their signing secrets and their deliveries (docs/webhooks.md).',
};

const DESCRIPTION = [
  'The operators’ API of the Animal Store: API keys, webhooks and the audit log. It is served on its own listener (`ADMIN_PORT`, loopback unless `ADMIN_HOST` says otherwise), never on the public port.',
  '',
  'Every operation needs an admin token, sent as `Authorization: Bearer <token>`; tokens are issued by the key tool (`npm run apikey -- admin create --name <who>`). A missing token is 401 `missing_admin_token`; an unknown or revoked one, or an API key, 401 `invalid_admin_token`.',
  '',
  'Every change is recorded in the audit log with the token’s name as its actor, in the same transaction as the change. Changes reach every instance of the service within 5 s. Identifiers are int64: read them with a JSON parser that keeps big integers.',
].join('\n');

/** The admin API's own OpenAPI document, built from its controllers only. */
export function buildAdminOpenApiDocument(app: INestApplication): OpenAPIObject {
  const builder = new DocumentBuilder()
    .setTitle('Animal Store admin API')
    .setDescription(DESCRIPTION)
    .setVersion('2.4.0')
    .setLicense('Proprietary: all rights reserved', 'https://animal-store.example/terms')
    .addServer('http://127.0.0.1:9100', 'The admin listener (ADMIN_HOST:ADMIN_PORT)')
    .addBearerAuth(
      {
        type: 'http',
        scheme: 'bearer',
        bearerFormat: 'admin token',
        description: 'An admin token (`asadm_…`), sent as `Authorization: Bearer <token>`.',
      },
      ADMIN_BEARER_SCHEME,
    );
  for (const [name, description] of Object.entries(TAGS)) builder.addTag(name, description);
  const doc = SwaggerModule.createDocument(app, builder.build(), { operationIdFactory: (_c, method) => method });
  doc.info.contact = { name: 'Animal Store API team', email: 'api@animal-store.example' };
  // The Error schema is the public API's class; its codes here are the admin API's too.
  const error = doc.components?.schemas?.Error as { properties?: { code?: { enum?: string[] } } } | undefined;
  if (error?.properties?.code) error.properties.code.enum = [...ERROR_CODES, ...ADMIN_ERROR_CODES];
  doc.components ??= {};
  for (const schema of Object.values(doc.components.schemas ?? {})) unwrapSingleRefAllOf(schema);
  doc.components.headers = {
    ...doc.components.headers,
    RequestId: {
      description: "The request's id: the incoming X-Request-Id when well formed, else a new UUID.",
      schema: { type: 'string' },
    },
  };
  for (const item of Object.values(doc.paths)) {
    for (const operation of Object.values(
      item as Record<string, { responses?: Record<string, { headers?: object }> }>,
    )) {
      if (typeof operation !== 'object' || !operation?.responses) continue;
      for (const [status, response] of Object.entries(operation.responses)) {
        operation.responses[status] = {
          ...response,
          headers: { [REQUEST_ID_HEADER]: { $ref: '#/components/headers/RequestId' }, ...response.headers },
        };
      }
    }
  }
  return doc;
}

/** Serves the document; it holds no data, so it needs no token. */
@ApiExcludeController()
@AdminPublic()
@Controller()
export class AdminOpenApiController {
  private document?: OpenAPIObject;

  /** Set once the admin application is built (the document is made from its routes). */
  use(document: OpenAPIObject): void {
    this.document = document;
  }

  @Get(ADMIN_OPENAPI_PATH)
  get(): OpenAPIObject {
    return this.document as OpenAPIObject;
  }
}
