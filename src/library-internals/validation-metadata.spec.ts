import { IsInt, IsOptional, IsString, ValidateIf } from 'class-validator';
import { validatedProperties } from './validation-metadata.js';

/**
 * Canary for validation-metadata.ts: class-validator's metadata storage lists a class's
 * decorated properties, its ancestors' included. A failure here means a class-validator upgrade
 * changed getTargetValidationMetadatas: the validation pipe (http/api-validation.pipe.ts) would
 * refuse valid fields as unknown, or let unknown ones through.
 */
function internal(ok: boolean, what: string): void {
  if (!ok)
    throw new Error(
      `class-validator internal changed: ${what}. Re-check src/library-internals/validation-metadata.ts.`,
    );
}

class Base {
  @IsString()
  name!: string;
}

class Query extends Base {
  @IsOptional()
  @IsInt()
  limit?: number;

  @ValidateIf(() => true)
  @IsString({ groups: ['other'] })
  cursor?: string;

  undecorated?: string;
}

describe('class-validator internal: getMetadataStorage().getTargetValidationMetadatas', () => {
  it('lists every decorated property of a class and its ancestors, and nothing else', () => {
    const fields = [...validatedProperties(Query)].sort();
    internal(
      JSON.stringify(fields) === JSON.stringify(['cursor', 'limit', 'name']),
      `the properties listed for a DTO are ${JSON.stringify(fields)}, not ["cursor","limit","name"]`,
    );
    expect([...validatedProperties(Base)]).toEqual(['name']);
  });
});
