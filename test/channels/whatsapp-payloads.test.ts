import { describe, expect, it } from 'vitest';
import { freeFormBody, recipientOf, templateBody } from '../../src/channels/whatsapp/whatsapp-channel.ts';
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
    expect(messages).toEqual([
      expect.objectContaining({
        type,
        text,
        messageId: expect.stringMatching(/^wamid\./),
        phoneNumberId: '106540352242922',
        sentAt: expect.any(Date),
      }),
    ]);
  });

  it('reads the business-scoped user id beside wa_id', () => {
    expect(read('text-bsuid').messages[0]).toMatchObject({ waId: '16505551234', userId: 'US.13491208655302741918' });
    expect(read('text').messages[0]).toMatchObject({ waId: '16505551234', userId: null, profileName: 'Sheena Nelson' });
  });

  it(
    'keeps a message whose optional parts are null or unreadable, answering it as unsupported when its text ' + 'is',
    () => {
      const envelope = fixture('whatsapp', 'text') as any;
      const value = envelope.entry[0].changes[0].value;
      value.contacts[0].profile.name = null;
      value.messages[0].from_user_id = null;
      value.messages.push({ ...value.messages[0], id: 'wamid.second', text: { body: 42 } });
      value.messages.push({ ...value.messages[0], id: 'wamid.blank', text: { body: '  ' } });
      const { messages, skipped } = readWhatsAppWebhook(whatsappEnvelope.parse(envelope));
      expect(skipped).toEqual([]);
      expect(messages).toEqual([
        expect.objectContaining({
          waId: '16505551234',
          userId: null,
          profileName: null,
          text: 'I walked 20 minutes today',
        }),
        expect.objectContaining({ messageId: 'wamid.second', waId: '16505551234', text: null, type: 'text' }),
        expect.objectContaining({ messageId: 'wamid.blank', text: null, type: 'text' }),
      ]);
    },
  );

  it("never takes another person's contact for a sender", () => {
    const envelope = fixture('whatsapp', 'text-bsuid') as any;
    const value = envelope.entry[0].changes[0].value;
    value.messages[0].from = '14165550199'; // not the listed contact
    delete value.messages[0].from_user_id;
    const [message] = readWhatsAppWebhook(whatsappEnvelope.parse(envelope)).messages;
    expect(message).toMatchObject({ waId: '14165550199', userId: null, profileName: null });
  });

  it('skips system messages, which the person did not write', () => {
    expect(read('system-changed-number')).toEqual({ messages: [], receipts: [], skipped: [] });
  });

  it.each([
    ['status-sent', 'sent', null, null],
    ['status-delivered', 'delivered', null, null],
    ['status-read', 'read', null, null],
    ['status-failed', 'failed', expect.stringMatching(/^131026 /), 131026],
  ])('%s → receipt %s', (name, status, error, errorCode) => {
    expect(read(name).receipts).toEqual([
      { providerMessageId: expect.stringMatching(/^wamid\./), status, at: expect.any(Date), error, errorCode },
    ]);
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
      interactive: {
        type: 'button',
        body: { text: 'Did you do it?' },
        action: {
          buttons: [
            { type: 'reply', reply: { id: 'opt:1', title: 'Done' } },
            { type: 'reply', reply: { id: 'opt:2', title: 'Not yet' } },
          ],
        },
      },
    });
    const list = freeFormBody({
      text: 'q',
      poll: { question: 'Pick a day', options: ['Mon', 'Tue', 'Wed', 'Thu'] },
    }) as any;
    expect(list.interactive.type).toBe('list');
    expect(list.interactive.action.sections[0].rows.map((row: any) => row.id)).toEqual([
      'opt:1',
      'opt:2',
      'opt:3',
      'opt:4',
    ]);
    // Button titles hold 20 characters, list rows 24: a longer option turns 3 buttons into a list.
    const long = freeFormBody({
      text: 'q',
      poll: { question: 'How hard?', options: ['Easier', 'About the same as now', 'Harder'] },
    }) as any;
    expect(long.interactive.type).toBe('list');
  });

  it('sends to a phone number in `to` (also a bare wa_id) and to a business-scoped user id in `recipient`', () => {
    expect(recipientOf('+14165550123')).toEqual({ to: '14165550123' });
    expect(recipientOf('5215512345678')).toEqual({ to: '5215512345678' });
    expect(recipientOf('US.13491208655302741918')).toEqual({ recipient: 'US.13491208655302741918' });
  });

  it('cuts a template parameter to what the template leaves of 1,024 characters, never inside a character', () => {
    const body = templateBody(
      { text: '😀'.repeat(2000), poll: null },
      { name: 't', language: 'en_US', textLength: 100 },
    ) as any;
    const parameter: string = body.template.components[0].parameters[0].text;
    expect([...parameter]).toHaveLength(924);
    expect(parameter.endsWith('😀…')).toBe(true);
    expect(parameter.isWellFormed()).toBe(true);
  });

  it('a template carries the text as its one parameter, whitespace collapsed as Meta requires', () => {
    expect(
      templateBody(
        { text: 'Line one.\n\nLine    two.\tEnd', poll: null },
        { name: 'daily_checkin', language: 'en_US', textLength: 60 },
      ),
    ).toEqual({
      type: 'template',
      template: {
        name: 'daily_checkin',
        language: { code: 'en_US' },
        components: [{ type: 'body', parameters: [{ type: 'text', text: 'Line one. Line two. End' }] }],
      },
    });
  });
});
