import { Injectable, PipeTransform } from '@nestjs/common';
import { unknownNamesError } from './unknown-names.js';

/**
 * For `@Query()` of an operation that takes no query parameters: any parameter is a 400
 * `unknown_parameter` naming it, as the validation pipe answers an unknown parameter of a query
 * DTO (a typo must not go unnoticed), the names echoed bounded as there (unknown-names.ts).
 */
@Injectable()
export class NoQueryParametersPipe implements PipeTransform<Record<string, unknown>, void> {
  transform(query: Record<string, unknown> | undefined): void {
    const names = Object.keys(query ?? {});
    if (names.length === 0) return;
    throw unknownNamesError('parameter', names);
  }
}
