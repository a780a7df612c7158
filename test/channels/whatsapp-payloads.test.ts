import { describe, expect, it } from 'vitest';
import { freeFormBody, templateBody } from '../../src/channels/whatsapp/whatsapp-channel.ts';
import { readWhatsAppWebhook, whatsappEnvelope } from '../../src/channels/whatsapp/whatsapp-webhook.ts';
import { fixture } from '../kit/provider-kit.ts';

const read = (name: string) => readWhatsAppWebhook(whatsappEnvelope.parse(fixture('whatsapp', name)));

// Every recorded-shape payload (test/fixtures/whatsapp, written from Meta's reference) and what we make of it.
describe('reading WhatsApp webhooks', () => {
  it.each([
    ['text', 'text', 'I walked 20 minutes today'],
    ['button-reply', 'interactive:button_reply', 'Done'],
    ['list-reply', 'interactive:list_reply', expect.any(String)],
    ['template-button', 'button', expect.any(String)],
    ['image', 'image', null],
    ['audio', 'audio', null],
    ['location', 'location', null],
    ['sticker', 'sticker', null],
    ['reaction', 'reaction', null],
    ['unsupported', 'unsupported', null],
  ])('%s → type %s, text %j', (name, type, text) => {
    const { messages, receipts, skipped } = read(name);
    expect(skipped).toEqual([]);
    expect(receipts).toEqual([]);
    expect(messages).toEqual([expect.objectContaining({ type, text, messageId: expect.stringMatching(/^wamid\./), phoneNumberId: '106540352242922', sentAt: expect.any(Date) })]);
  });

  it('reads the business-scoped user id beside wa_id', () => {
    expect(read('text-bsuid').messages[0]).toMatchObject({ waId: '16505551234', userId: 'US.13491208655302741918' });
    expect(read('text').messages[0]).toMatchObject({ waId: '16505551234', userId: null, profileName: 'Sheena Nelson' });
  });

  it('skips system messages, which the person did not write', () => {
    expect(read('system-changed-number')).toEqual({ messages: [], receipts: [], skipped: [] });
  });

  it.each([
    ['status-sent', 'sent', null],
    ['status-delivered', 'delivered', null],
    ['status-read', 'read', null],
    ['status-failed', 'failed', expect.stringMatching(/^131026 /)],
  ])('%s → receipt %s', (name, status, error) => {
    expect(read(name).receipts).toEqual([{ providerMessageId: expect.stringMatching(/^wamid\./), status, at: expect.any(Date), error }]);
  });

  it('reads every entry and change of a batch', () => {
    const batch = read('batched');
    expect(batch.messages.length).toBeGreaterThanOrEqual(2);
    expect(batch.receipts).toHaveLength(1);
  });

  it('keeps going past a message it cannot read, and ignores other fields', () => {
    const payload = fixture('whatsapp', 'text');
    payload.entry[0].changes[0].value.messages.unshift({ type: 'text' });
    payload.entry[0].changes.push({ field: 'account_update', value: { anything: true } });
    const result = readWhatsAppWebhook(whatsappEnvelope.parse(payload));
    expect(result.messages).toHaveLength(1);
    expect(result.skipped).toEqual([expect.stringContaining('could not be read (id:')]);
  });
});

describe('WhatsApp message bodies', () => {
  it('a poll of up to 3 options is reply buttons; more is a list', () => {
    expect(freeFormBody({ text: 'q', poll: { question: 'Did you do it?', options: ['Done', 'Not yet'] } })).toEqual({
      type: 'interactive',
      interactive: { type: 'button', body: { text: 'Did you do it?' }, action: { buttons: [{ type: 'reply', reply: { id: 'opt:1', title: 'Done' } }, { type: 'reply', reply: { id: 'opt:2', title: 'Not yet' } }] } },
    });
    const list = freeFormBody({ text: 'q', poll: { question: 'Pick a day', options: ['Mon', 'Tue', 'Wed', 'Thu'] } }) as any;
    expect(list.interactive.type).toBe('list');
    expect(list.interactive.action.sections[0].rows.map((row: any) => row.id)).toEqual(['opt:1', 'opt:2', 'opt:3', 'opt:4']);
  });

  it('a template carries the text as its one parameter, whitespace collapsed as Meta requires', () => {
    expect(templateBody({ text: 'Line one.\n\nLine    two.\tEnd', poll: null }, { name: 'daily_checkin', language: 'en_US' })).toEqual({
      type: 'template',
      template: { name: 'daily_checkin', language: { code: 'en_US' }, components: [{ type: 'body', parameters: [{ type: 'text', text: 'Line one. Line two. End' }] }] },
    });
  });
});
