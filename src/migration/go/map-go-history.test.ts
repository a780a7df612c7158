import { describe, expect, it } from 'vitest';
import { sequentialIds } from '../../core/clock.ts';
import type { NewMessage } from '../../core/domain.ts';
import { goDeliveries, withResponses } from './map-go-history.ts';

const kept = (role: 'user' | 'assistant', text: string, seconds: number): NewMessage => ({
  id: `m${seconds}`,
  conversationId: 'c',
  role,
  kind: 'text',
  text,
  poll: null,
  source: role === 'user' ? 'participant' : 'model',
  turnId: null,
  createdAt: new Date(seconds * 1000 + 1500), // Go kept a reply ~1.5 s after it came in
});
const response = (id: number, body: string, time: number) => ({ id, sender: '+14165550101', body, time });

describe("Go's responses next to its kept history", () => {
  it('adds the replies the history lost, at their time, and leaves the kept ones as they are', () => {
    const history = [kept('user', 'yes', 100), kept('assistant', 'Great', 101), kept('user', 'yes', 300)];
    const responses = [
      response(1, 'trimmed away', 10),
      response(2, 'yes', 100),
      response(3, 'no turn recorded this', 200),
      response(4, 'yes', 300),
    ];
    const merged = withResponses(history, responses, 'c', sequentialIds());
    expect(merged.map((message) => [message.text, message.createdAt.getTime() / 1000])).toEqual([
      ['trimmed away', 10],
      ['yes', 101.5],
      ['Great', 102.5],
      ['no turn recorded this', 200],
      ['yes', 301.5],
    ]);
  });
});

describe("Go's receipts as deliveries", () => {
  it("gives each report to the oldest earlier send without one (Go's receipts name no message)", () => {
    const rows = [
      { id: 1, recipient: '14165550101', status: 'sent', time: 10 },
      { id: 2, recipient: '14165550101', status: 'sent', time: 11 },
      { id: 3, recipient: '+14165550101', status: 'delivered', time: 12 },
      { id: 4, recipient: '+14165550101', status: 'delivered', time: 13 },
      { id: 5, recipient: '+14165550101', status: 'read', time: 20 },
      { id: 6, recipient: '+14165550101', status: 'cancelled', time: 21 },
    ];
    const target = { conversationId: 'c', participantId: 'p', phoneNumber: '+14165550101' };
    const deliveries = goDeliveries(rows, target, sequentialIds());
    expect(
      deliveries.map(({ item, reports }) => [
        item.idempotencyKey,
        reports.map((r) => `${r.status}@${r.at.getTime() / 1000}`),
      ]),
    ).toEqual([
      ['go-receipt:1', ['delivered@12', 'read@20']],
      ['go-receipt:2', ['delivered@13']],
    ]);
  });
});
