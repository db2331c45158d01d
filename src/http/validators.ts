import { registerDecorator, ValidationOptions } from 'class-validator';
import { toPositiveInt64 } from '../json/int64.js';

/** A JSON integer from 1 to 2^63-1: a safe number or an exact bigint; never a string or boolean. */
export function IsPositiveInt64(options?: ValidationOptions): PropertyDecorator {
  return (target: object, propertyName: string | symbol) => {
    registerDecorator({
      name: 'isPositiveInt64',
      target: target.constructor,
      propertyName: propertyName as string,
      options: { message: `${String(propertyName)} must be an integer from 1 to 9223372036854775807`, ...options },
      validator: { validate: (value: unknown) => toPositiveInt64(value) !== null },
    });
  };
}
