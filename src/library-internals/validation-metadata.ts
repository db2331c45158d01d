import { getMetadataStorage } from 'class-validator';

/**
 * Internal: class-validator's metadata storage, `getMetadataStorage()
 * .getTargetValidationMetadatas(target, targetSchema, always, strictGroups)` (checked against
 * class-validator 0.15.1; exported, but undocumented, and its parameters have changed between
 * versions). class-validator has no public way to list a class's decorated properties.
 * Canary: validation-metadata.spec.ts.
 *
 * The names of the properties a DTO class (and its ancestors) declares with validation
 * decorators: the fields a request may send.
 */
export function validatedProperties(metatype: new () => object): Set<string> {
  const metas = getMetadataStorage().getTargetValidationMetadatas(metatype, '', true, false);
  return new Set(metas.map((m) => m.propertyName));
}
