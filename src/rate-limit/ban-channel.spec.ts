import { Redis } from 'ioredis';
import { describeWithRedis, redisPrefix, redisUrl } from '../../test/support/redis-env.js';
import { waitFor } from '../../test/support/wait-for.js';
import { BanChannel } from './ban-channel.js';
import { UNHEARD } from './redis-leases.js';

const REDIS_URL = redisUrl() as string;

describeWithRedis('BanChannel against Redis', () => {
  let admin: Redis;
  let channel: BanChannel;
  let name: string;
  let bans: string[];
  /** Whether the channel's heartbeats reach Redis (false: published nowhere, as on a dead socket). */
  let publishing: boolean;

  beforeAll(() => {
    admin = new Redis(REDIS_URL);
  });
  afterAll(() => admin.disconnect());

  beforeEach(async () => {
    name = `${redisPrefix('bans')}bans`;
    bans = [];
    publishing = true;
    channel = new BanChannel({
      target: { kind: 'single', url: REDIS_URL },
      name,
      // start() waits this long at most for the first heartbeat to come back: long enough for a
      // loaded machine (CI's suites run beside an image build), so that it resolves on the heartbeat.
      connectTimeoutMs: 10_000,
      publish: async (to, message) => (publishing ? admin.publish(to, message) : 0),
      onBan: (subject) => bans.push(subject),
    });
    await channel.start();
  });
  afterEach(() => channel.stop());

  it('is heard once started: its own heartbeat came back', () => {
    expect(channel.epoch).not.toBe(UNHEARD);
  });

  it('hands each ban published on it to onBan, and ignores other channels', async () => {
    await admin.publish(`${name}-other`, 'ban:key:9');
    await admin.publish(name, 'ban:key:1');
    await admin.publish(name, 'ban:ip:10.0.0.1');
    await waitFor(() => bans.length === 2, { what: 'the two bans' });
    expect(bans).toEqual(['key:1', 'ip:10.0.0.1']);
    expect(channel.bansHeard).toBe(2);
  });

  it('moves to a new epoch when its connection is cut, once heard again', async () => {
    const before = channel.epoch;
    const list = (await admin.call('CLIENT', 'LIST', 'TYPE', 'pubsub')) as string;
    const id = /id=(\d+) [^\n]*name=(\S+)/g;
    const ours = [...String(list).matchAll(id)].find(([, , clientName]) => clientName === name);
    expect(ours).toBeDefined();
    await admin.call('CLIENT', 'KILL', 'ID', ours![1]);
    await waitFor(() => channel.epoch !== UNHEARD && channel.epoch !== before, {
      what: 'the channel heard again in a new epoch',
    });
    expect(channel.epoch).toBeGreaterThan(before);
  });

  it('stops being heard when its heartbeats stop coming back', async () => {
    const before = channel.epoch;
    publishing = false;
    await waitFor(() => channel.epoch === UNHEARD, { what: 'the channel unheard', timeoutMs: 10_000 });
    publishing = true;
    await waitFor(() => channel.epoch !== UNHEARD, { what: 'the channel heard again' });
    expect(channel.epoch).toBeGreaterThan(before);
  });
});
