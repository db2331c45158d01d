import { CallHandler, ExecutionContext, Injectable, NestInterceptor } from '@nestjs/common';
import type { Response } from 'express';
import { map, Observable } from 'rxjs';
import { stringifyJson } from './json-codec.js';

/**
 * Writes handler results as JSON with int64 values (bigint) as exact numbers; Express's
 * res.json would throw on a bigint. The handler's value is serialised once, here.
 */
@Injectable()
export class JsonResponseInterceptor implements NestInterceptor {
  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const res = context.switchToHttp().getResponse<Response>();
    return next.handle().pipe(
      map((value: unknown) => {
        if (value === undefined || typeof value === 'string' || Buffer.isBuffer(value)) return value;
        res.setHeader('Content-Type', 'application/json; charset=utf-8');
        return stringifyJson(value);
      }),
    );
  }
}
