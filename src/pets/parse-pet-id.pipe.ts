import { Injectable, PipeTransform } from '@nestjs/common';
import { ApiError } from '../errors/api-error.js';
import { parsePositiveInt64 } from '../json/int64.js';

/** Path parameter petId: a decimal int64 from 1 to 2^63-1, else 400 invalid_parameter. */
@Injectable()
export class ParsePetIdPipe implements PipeTransform<string, bigint> {
  transform(value: string): bigint {
    const id = parsePositiveInt64(value);
    if (id === null) {
      throw new ApiError('invalid_parameter', 'petId must be an integer from 1 to 9223372036854775807.', {
        details: [{ field: 'petId', message: 'petId must be an integer from 1 to 9223372036854775807' }],
      });
    }
    return id;
  }
}
