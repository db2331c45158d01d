import { Inject, Injectable, Logger, Module, OnApplicationShutdown, OnModuleInit } from '@nestjs/common';
import { tracingConfig, type TracingConfig } from '../config/tracing.config.js';
import { startTracing } from './tracing.js';

/** Starts exporting traces with the app (when an OTLP endpoint is configured) and flushes them at shutdown. */
@Injectable()
export class TracingLifecycle implements OnModuleInit, OnApplicationShutdown {
  private readonly logger = new Logger('Tracing');
  private stop?: () => Promise<void>;

  constructor(@Inject(tracingConfig.token) private readonly config: TracingConfig) {}

  async onModuleInit(): Promise<void> {
    this.stop = await startTracing(this.config);
    if (this.config.otlpTracesEndpoint !== undefined) {
      this.logger.log(
        `exporting traces to ${this.config.otlpTracesEndpoint} (sampler ${this.config.sampler}, ratio ${this.config.samplerRatio})`,
      );
    }
  }

  async onApplicationShutdown(): Promise<void> {
    await this.stop?.();
  }
}

@Module({ providers: [TracingLifecycle] })
export class TracingModule {}
