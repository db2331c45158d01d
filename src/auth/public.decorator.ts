import { SetMetadata } from '@nestjs/common';
import { AUTH_MODE, AuthMode } from './auth-mode.js';

/**
 * Marks a controller or handler as open without credentials (health, docs, metrics).
 * Every other route needs a valid API key: the global AdmissionGuard denies by default.
 */
export const Public = (): ClassDecorator & MethodDecorator => SetMetadata<string, AuthMode>(AUTH_MODE, 'public');
