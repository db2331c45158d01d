import { DynamicModule, Global, Module, Provider } from '@nestjs/common';
import { AppConfig, CONFIG_SLICES, loadConfig } from './config.js';

/** Provides each configuration slice under its own token (`@Inject(serverConfig.token)`). */
@Global()
@Module({})
export class ConfigModule {
  /** Loaded from process.env unless a configuration is given (main.ts loads it first; tests). */
  static forRoot(config: AppConfig = loadConfig()): DynamicModule {
    const slices = Object.entries(CONFIG_SLICES) as [keyof AppConfig, (typeof CONFIG_SLICES)[keyof AppConfig]][];
    const providers: Provider[] = slices.map(([key, slice]) => ({ provide: slice.token, useValue: config[key] }));
    return { module: ConfigModule, providers, exports: slices.map(([, slice]) => slice.token) };
  }
}
