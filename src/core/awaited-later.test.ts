import { describe, expect, it } from 'vitest';
import { awaitedLater } from './awaited-later.ts';

describe('awaitedLater', () => {
  it('keeps a failure for whoever awaits it, and is no unhandled rejection before then', async () => {
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    process.on('unhandledRejection', onUnhandled);
    try {
      const later = awaitedLater(Promise.reject(new Error('the statement failed')));
      const bare = Promise.reject(new Error('not marked'));
      await new Promise((resolve) => setTimeout(resolve, 10));
      expect(unhandled).toHaveLength(1); // the bare one only
      expect(String(unhandled[0])).toContain('not marked');
      await expect(later).rejects.toThrow('the statement failed');
      await expect(bare).rejects.toThrow('not marked');
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
  });
});
