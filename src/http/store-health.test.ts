import { describe, expect, it } from 'vitest';
import { classifyStoreError } from '../store/classify-faults.ts';
import { checkStore } from './store-health.ts';

describe('the store check of /health', () => {
  it('says the store is down when its ping does not answer in time, instead of waiting for it', async () => {
    const hung = { ping: () => new Promise<void>(() => undefined) };
    expect(await checkStore(hung, 20)).toEqual({ ok: false, problem: 'the database did not answer within 20 ms' });
  });

  it("names the fault of a failed ping without the driver's message", async () => {
    // The store adapter classifies driver faults (`classifyFaults`); the check shows its words only.
    const full = {
      ping: () =>
        Promise.reject(classifyStoreError(Object.assign(new Error('database or disk is full'), { errcode: 13 }))),
    };
    expect(await checkStore(full, 1000)).toEqual({
      ok: false,
      problem: 'the database cannot be written right now: no space left; retry shortly',
    });
    const refused = {
      ping: () =>
        Promise.reject(
          classifyStoreError(Object.assign(new Error('connect ECONNREFUSED 10.0.0.5:5432'), { code: 'ECONNREFUSED' })),
        ),
    };
    expect(await checkStore(refused, 1000)).toEqual({
      ok: false,
      problem: 'the database cannot be reached right now; retry shortly',
    });
    const odd = { ping: () => Promise.reject(new Error('connect ECONNREFUSED 10.0.0.5:5432 but unclassified')) };
    expect(await checkStore(odd, 1000)).toEqual({ ok: false, problem: 'the database cannot be reached right now' });
    expect(await checkStore({ ping: async () => undefined }, 1000)).toEqual({ ok: true });
  });
});
