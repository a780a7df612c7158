import { describe, expect, it } from 'vitest';
import { pino } from 'pino';
import { EventFollowers } from '../../src/events/event-followers.ts';
import { waitFor } from '../kit/wait-for.ts';

/** A store that records what it is asked, and fails while `failing` is set. */
function setup(ttlMs = 60) {
  const calls: string[] = [];
  const caughtUp: string[] = [];
  let now = 1_000;
  const state = { failing: false };
  const followers = new EventFollowers({
    store: {
      followEvents: async (ids, owner, until) => {
        if (state.failing) throw new Error('database away');
        calls.push(`follow ${ids.join(',')} ${owner} ${until.getTime()}`);
      },
      unfollowEvents: async (id, owner) => void calls.push(`unfollow ${id} ${owner}`),
    },
    owner: 'me',
    now: () => new Date(now),
    catchUp: async (id) => void caughtUp.push(id),
    logger: pino({ level: 'silent' }),
    ttlMs,
  });
  return { followers, calls, caughtUp, state, advance: (ms: number) => (now += ms) };
}

describe('EventFollowers', () => {
  it('registers a first subscriber, then reads what commits before it wrote; unregisters the last', async () => {
    const { followers, calls, caughtUp } = setup(60_000);
    followers.set('c1', true);
    followers.set('c1', true); // already followed
    await waitFor(() => caughtUp.length === 1, { what: 'catch-up' });
    expect(calls).toEqual(['follow c1 me 61000']);
    expect(caughtUp).toEqual(['c1']);
    followers.set('c1', false);
    followers.set('c2', false); // never followed
    await followers.close();
    expect(calls).toEqual(['follow c1 me 61000', 'unfollow c1 me']);
  });

  it('renews before the rows lapse without reading again, and catches all up after failed renewals', async () => {
    const { followers, calls, caughtUp, state, advance } = setup(60);
    followers.set('c1', true);
    followers.set('c2', true);
    await waitFor(() => caughtUp.length === 2, { what: 'first catch-ups' });
    // Two renewals: the first one's catch-ups, had it made any, are over before the second is written.
    const renewals = () => calls.filter((call) => call.startsWith('follow c1,c2')).length;
    await waitFor(() => renewals() >= 2, { what: 'two renewals' });
    expect(caughtUp).toEqual(['c1', 'c2']); // renewed in time: nothing was missed
    state.failing = true;
    advance(1_000); // past the rows' time: other processes stopped telling this one
    await new Promise((resolve) => setTimeout(resolve, 50));
    state.failing = false;
    await waitFor(() => caughtUp.length === 4, { what: 'catch-up after the gap' });
    expect(caughtUp.slice(2).sort()).toEqual(['c1', 'c2']);
    await followers.close();
    expect(calls.slice(-2).sort()).toEqual(['unfollow c1 me', 'unfollow c2 me']);
  });
});
