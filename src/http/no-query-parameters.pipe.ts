import { Injectable, PipeTransform } from '@nestjs/common';
import { ApiError } from '../errors/api-error.js';

/**
 * For `@Query()` of an operation that takes no query parameters: any parameter is a 400
 * `unknown_parameter` naming it, as the validation pipe answers an unknown parameter of a query
 * DTO (a typo must not go unnoticed).
 */
@Injectable()
export class NoQueryParametersPipe implements PipeTransform<Record<string, unknown>, void> {
  transform(query: Record<string, unknown> | undefined): void {
    const names = Object.keys(query ?? {});
    if (names.length === 0) return;
    throw new ApiError(
      400,
      'unknown_parameter',
      `Unknown parameter${names.length > 1 ? 's' : ''}: ${names.join(', ')}.`,
      { details: names.map((field) => ({ field, message: `${field} is not an accepted parameter` })) },
    );
  }
}
