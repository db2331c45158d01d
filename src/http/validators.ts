import { registerDecorator, ValidationArguments, ValidationOptions } from 'class-validator';
import { toPositiveInt64 } from '../json/int64.js';
import { nameMessage, nameProblem } from './names.js';

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

/**
 * The rules of names.ts on a string property of at most `maxCodePoints` (IsString runs first and
 * refuses anything else).
 */
export function IsName(maxCodePoints: number): PropertyDecorator {
  return (target: object, propertyName: string | symbol) => {
    const field = String(propertyName);
    registerDecorator({
      name: 'isName',
      target: target.constructor,
      propertyName: field,
      validator: {
        validate: (value: unknown) => typeof value === 'string' && nameProblem(value, maxCodePoints) === undefined,
        defaultMessage: (args?: ValidationArguments) => {
          const value = args?.value;
          return typeof value === 'string'
            ? nameMessage(nameProblem(value, maxCodePoints) ?? 'length', field, maxCodePoints)
            : `${field} must be a string`;
        },
      },
    });
  };
}
