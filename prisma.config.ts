import { defineConfig } from 'prisma/config';

// The datasource URL lives here (Prisma 7). `prisma generate` does not need it.
export default defineConfig({
  schema: 'prisma/schema.prisma',
  migrations: { path: 'prisma/migrations' },
  // DIRECT_URL bypasses a pooler (Prisma's directUrl): the CLI migrates through it.
  datasource: {
    url: process.env.DIRECT_URL ?? process.env.DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres',
  },
});
