import { Module } from '@nestjs/common';
import { SunsetGuard } from './deprecation.js';

/**
 * Deprecation for any feature: a module that marks an operation @Deprecated() imports this one,
 * which provides the SunsetGuard the decorator applies. The headers are set by
 * DeprecationHeadersGuard, the first of AppModule's global guards.
 */
@Module({
  providers: [SunsetGuard],
  exports: [SunsetGuard],
})
export class DeprecationModule {}
