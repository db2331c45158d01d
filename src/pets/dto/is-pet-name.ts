import { registerDecorator, ValidationArguments } from 'class-validator';
import { NAME_MAX_CODE_POINTS, nameProblem } from '../pet-name.js';

const MESSAGES = {
  length: `name must be 1 to ${NAME_MAX_CODE_POINTS} characters long`,
  blank: 'name must contain a visible character',
  forbidden: 'name must not contain control characters, line separators, bidirectional controls or unpaired surrogates',
} as const;

/** The rules of pet-name.ts on a string property (IsString runs first and refuses anything else). */
export function IsPetName(): PropertyDecorator {
  return (target: object, propertyName: string | symbol) => {
    registerDecorator({
      name: 'isPetName',
      target: target.constructor,
      propertyName: propertyName as string,
      validator: {
        validate: (value: unknown) => typeof value === 'string' && nameProblem(value) === undefined,
        defaultMessage: (args?: ValidationArguments) => {
          const value = args?.value;
          return typeof value === 'string' ? MESSAGES[nameProblem(value) ?? 'length'] : 'name must be a string';
        },
      },
    });
  };
}
