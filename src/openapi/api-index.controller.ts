import { Controller, Get, Res } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { Response } from 'express';
import { Public } from '../auth/public.decorator.js';

/** Where the documentation is, relative to the origin the request reached. */
export const DOCS_PATH = '/docs';
export const OPENAPI_PATH = '/openapi.json';

/** The body of `GET /` and `GET /v1`: what this is and where its documentation lives. */
export interface ApiIndex {
  name: string;
  version: string;
  docs: string;
  openapi: string;
  api: string;
}

const INDEX: ApiIndex = {
  name: 'Animal Store API',
  version: '1.0.0',
  docs: DOCS_PATH,
  openapi: OPENAPI_PATH,
  api: '/v1',
};

/**
 * `GET /` and `GET /v1` (HEAD too) point a newcomer to the documentation: 200 with a small JSON
 * body of links and the same links as RFC 8631 `Link` relations (service-doc: the page for
 * people, service-desc: the machine-readable document). Relative references, so they resolve
 * against whatever host name the request used. Public and not rate limited, like the documents
 * they point to; left out of the OpenAPI document, whose operations are the API's.
 */
@ApiExcludeController()
@Public()
@Controller()
export class ApiIndexController {
  @Get()
  root(@Res({ passthrough: true }) res: Response): ApiIndex {
    return this.index(res);
  }

  @Get('v1')
  v1(@Res({ passthrough: true }) res: Response): ApiIndex {
    return this.index(res);
  }

  private index(res: Response): ApiIndex {
    res.setHeader('Link', `<${DOCS_PATH}>; rel="service-doc", <${OPENAPI_PATH}>; rel="service-desc"`);
    return INDEX;
  }
}
