/** Injection token of the opened Database (PostgreSQL or embedded). */
export const DATABASE = Symbol('DATABASE');
