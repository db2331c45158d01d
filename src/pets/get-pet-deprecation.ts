/** getPet was deprecated when v1.0.0 of this service shipped (RFC 9745 structured date). */
export const GET_PET_DEPRECATED_AT = new Date('2026-11-22T00:00:00Z');
/** getPet is removed on 5 December 2030, and answers 410 from then on (docs/api.md, "Deprecation of getPet"). */
export const GET_PET_SUNSET = new Date('2030-12-05T00:00:00Z');
