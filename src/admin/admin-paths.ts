/** Where the admin API's operations live on its listener (ADMIN_PORT). */
export const ADMIN_BASE_PATH = '/admin/v1';
/** Its OpenAPI document. */
export const ADMIN_OPENAPI_PATH = '/admin/openapi.json';
/** The name of its bearer security scheme in that document. */
export const ADMIN_BEARER_SCHEME = 'adminToken';
