// What `npm run bench:console` measures: one row per request the operator console makes. `path`
// is a function of the run's context (ctx: the dates and ids of the dataset); `auth` is `token`
// (the admin API's bearer token) or `session` (the console's cookie from POST /admin/sign-in).
// A console page is one more row, such as:
//   { name: 'page /admin/keys', path: () => '/admin/keys', auth: 'session' },

/** The context the paths are written from: the dataset's keys and the run's clock. */
export function routeContext({ now, busyKeyId, keyPrefix, nameFragment, farCursor }) {
  const hour = new Date(Math.floor(now / 3_600_000) * 3_600_000);
  const day = new Date(Math.floor(now / 86_400_000) * 86_400_000);
  const iso = (d) => d.toISOString().replace('.000Z', 'Z');
  const hoursAgo = (h) => iso(new Date(hour.getTime() - h * 3_600_000));
  const daysAgo = (d) => iso(new Date(day.getTime() - d * 86_400_000)).slice(0, 10);
  return {
    busyKeyId,
    keyPrefix,
    nameFragment,
    farCursor,
    /** The last 7 days as the console asks them: the 168 hours up to the end of the current one. */
    week: `from=${hoursAgo(167)}&to=${hoursAgo(-1)}`,
    /**
     * From noon 6 days ago to the end of the current hour: a first day cut in half, with usage on
     * both sides of the cut, the most hours the busiest keys read from key_usage.
     */
    fromNoon: `from=${daysAgo(6)}T12:00:00Z&to=${hoursAgo(-1)}`,
    /** The last 7 days as whole UTC days, today included. */
    days7: `from=${daysAgo(6)}&to=${daysAgo(-1)}`,
    /** The last 90 days, whole UTC days, today included. */
    quarter: `from=${daysAgo(89)}&to=${daysAgo(-1)}`,
  };
}

export const CONSOLE_ROUTES = [
  { name: 'keys', path: () => '/admin/v1/keys', auth: 'token' },
  { name: 'keys search=<name part>', path: (c) => `/admin/v1/keys?search=${c.nameFragment}`, auth: 'token' },
  { name: 'keys search=<key start>', path: (c) => `/admin/v1/keys?search=${c.keyPrefix}`, auth: 'token' },
  { name: 'keys plan=enterprise', path: () => '/admin/v1/keys?plan=enterprise', auth: 'token' },
  { name: 'keys state=revoked', path: () => '/admin/v1/keys?state=revoked', auth: 'token' },
  { name: 'keys state=expiring', path: () => '/admin/v1/keys?state=expiring', auth: 'token' },
  { name: 'keys far page (cursor)', path: (c) => `/admin/v1/keys?cursor=${c.farCursor}`, auth: 'token' },
  { name: 'key usage hour 7d', path: (c) => `/admin/v1/keys/${c.busyKeyId}/usage?${c.week}`, auth: 'token' },
  {
    name: 'key usage day 90d',
    path: (c) => `/admin/v1/keys/${c.busyKeyId}/usage?${c.quarter}&granularity=day`,
    auth: 'token',
  },
  {
    name: 'key usage hour 7d by=operation',
    path: (c) => `/admin/v1/keys/${c.busyKeyId}/usage?${c.week}&by=operation`,
    auth: 'token',
  },
  {
    name: 'key usage day 90d by=operation',
    path: (c) => `/admin/v1/keys/${c.busyKeyId}/usage?${c.quarter}&granularity=day&by=operation`,
    auth: 'token',
  },
  { name: 'usage hour 7d', path: (c) => `/admin/v1/usage?${c.week}`, auth: 'token' },
  { name: 'usage day 90d', path: (c) => `/admin/v1/usage?${c.quarter}&granularity=day`, auth: 'token' },
  { name: 'top-keys 7d limit=10', path: (c) => `/admin/v1/usage/top-keys?${c.week}`, auth: 'token' },
  { name: 'top-keys 7d limit=100', path: (c) => `/admin/v1/usage/top-keys?${c.week}&limit=100`, auth: 'token' },
  { name: 'top-keys from noon 6 d ago', path: (c) => `/admin/v1/usage/top-keys?${c.fromNoon}`, auth: 'token' },
  { name: 'top-keys 7 UTC days limit=10', path: (c) => `/admin/v1/usage/top-keys?${c.days7}`, auth: 'token' },
  { name: 'audit', path: () => '/admin/v1/audit', auth: 'token' },
  { name: 'audit actor=ops-bob', path: () => '/admin/v1/audit?actor=ops-bob', auth: 'token' },
  { name: 'audit actor=system:leak-scanner', path: () => '/admin/v1/audit?actor=system%3Aleak-scanner', auth: 'token' },
  { name: 'audit action=key.revoked', path: () => '/admin/v1/audit?action=key.revoked', auth: 'token' },
  { name: 'audit keyId', path: (c) => `/admin/v1/audit?keyId=${c.busyKeyId}`, auth: 'token' },
  // The console's pages, each as the browser asks it, with the session's cookie.
  { name: 'page /admin/ (overview)', path: () => '/admin/', auth: 'session' },
  { name: 'page /admin/keys', path: () => '/admin/keys', auth: 'session' },
  { name: 'page /admin/keys search=<name part>', path: (c) => `/admin/keys?search=${c.nameFragment}`, auth: 'session' },
  { name: 'page /admin/keys search=<key start>', path: (c) => `/admin/keys?search=${c.keyPrefix}`, auth: 'session' },
  { name: 'page /admin/keys plan and state', path: () => '/admin/keys?plan=pro&state=active', auth: 'session' },
  { name: 'page /admin/keys far page', path: (c) => `/admin/keys?cursor=${c.farCursor}`, auth: 'session' },
  { name: 'page /admin/keys/new', path: () => '/admin/keys/new', auth: 'session' },
  { name: 'page /admin/keys/{id} (busiest key)', path: (c) => `/admin/keys/${c.busyKeyId}`, auth: 'session' },
  { name: 'page /admin/audit', path: () => '/admin/audit', auth: 'session' },
  {
    name: 'page /admin/audit filtered',
    path: (c) => `/admin/audit?actor=ops-bob&keyId=${c.busyKeyId}`,
    auth: 'session',
  },
];
