let seq = 0;

/** A valid NewPet body; override any field. */
export function newPet(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  seq += 1;
  return { name: `Pet ${seq}`, categoryId: 1 + (seq % 5), ...overrides };
}
