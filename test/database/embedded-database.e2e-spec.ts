import { openDatabase } from '../../src/database/open-database.js';
import { createTestDatabase, TestDatabase } from '../support/databases.js';

describe('the embedded database', () => {
  let db: TestDatabase;

  beforeAll(async () => {
    db = await createTestDatabase('embedded');
  });

  afterAll(async () => {
    await db?.drop();
  });

  it("runs with 32 MB of shared buffers and 5 connection slots, not postgresql.conf's 128 MB and 100", async () => {
    const database = await openDatabase(db.config().database, () => {}, 'settings test');
    try {
      const settings = await database.withRunner((run) =>
        run.query<{ name: string; setting: string }>(
          "SELECT name, current_setting(name) AS setting FROM pg_settings WHERE name IN ('shared_buffers', 'max_connections') ORDER BY name",
        ),
      );
      expect(settings).toEqual([
        { name: 'max_connections', setting: '5' },
        { name: 'shared_buffers', setting: '32MB' },
      ]);
    } finally {
      await database.close();
    }
  });
});
