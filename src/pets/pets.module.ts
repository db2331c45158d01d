import { MiddlewareConsumer, Module, NestModule, RequestMethod } from '@nestjs/common';
import { IdempotencyModule } from '../idempotency/idempotency.module.js';
import { DeprecationHeadersMiddleware, SunsetGuard } from './deprecation.js';
import { PetsController } from './pets.controller.js';
import { PetsService } from './pets.service.js';

@Module({
  imports: [IdempotencyModule],
  controllers: [PetsController],
  providers: [PetsService, SunsetGuard],
})
export class PetsModule implements NestModule {
  configure(consumer: MiddlewareConsumer): void {
    consumer.apply(DeprecationHeadersMiddleware).forRoutes({ path: 'v1/pets/:petId', method: RequestMethod.GET });
  }
}
