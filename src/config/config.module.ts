import { DynamicModule, Global, Module } from '@nestjs/common';
import { AppConfig, loadConfig } from './config.js';

/** Injection token of the validated configuration. */
export const APP_CONFIG = Symbol('APP_CONFIG');

@Global()
@Module({})
export class ConfigModule {
  /** The validated configuration; loaded from process.env unless one is given (tests). */
  static forRoot(config?: AppConfig): DynamicModule {
    return {
      module: ConfigModule,
      providers: [{ provide: APP_CONFIG, useFactory: (): AppConfig => config ?? loadConfig() }],
      exports: [APP_CONFIG],
    };
  }
}
