import { Module } from '@nestjs/common';
import { ApiIndexController } from './api-index.controller.js';

/** The pointers to the documentation (`GET /`, `GET /v1`); the documents themselves are mounted by mountOpenApi. */
@Module({ controllers: [ApiIndexController] })
export class OpenApiModule {}
