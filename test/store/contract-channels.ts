import { describe, expect, it } from 'vitest';
import type { DeliveryStatus } from '../../src/core/domain.ts';
import type { Store } from '../../src/store/store.ts';
import { at, outboxItem, participantWithConversation } from './store-fixtures.ts';

/** Channel contacts, delivery receipts and where a conversation's replies go (decision 003). */
export function channelsContract(store: () => Store): void {
  const setup = () => participantWithConversation(store());

  describe('channel contacts', () => {
    it('records a contact on inbound, links it, and only ever moves lastInboundAt forward', async () => {
      const { p } = await setup();
      const first = await store().recordContactInbound(
        { channel: 'whatsapp', contactId: 'US.1349', participantId: null, phoneNumber: null },
        at(5000),
      );
      expect(first).toEqual({
        channel: 'whatsapp',
        contactId: 'US.1349',
        participantId: null,
        phoneNumber: null,
        lastInboundAt: at(5000),
        optedOutAt: null,
        updatedAt: at(5000),
      });
      await store().recordContactInbound(
        { channel: 'whatsapp', contactId: 'US.1349', participantId: p.id, phoneNumber: p.phoneNumber },
        at(3000),
      ); // a late redelivery
      const linked = await store().getContact('whatsapp', 'US.1349');
      expect(linked).toMatchObject({ participantId: p.id, phoneNumber: p.phoneNumber, lastInboundAt: at(5000) });
      await store().recordContactInbound(
        { channel: 'whatsapp', contactId: 'US.1349', participantId: null, phoneNumber: null },
        at(9000),
      );
      expect(await store().getContact('whatsapp', 'US.1349')).toMatchObject({
        participantId: p.id,
        phoneNumber: p.phoneNumber,
        lastInboundAt: at(9000),
      });
      expect(await store().getContact('twilio', 'US.1349')).toBeUndefined();
    });

    it("finds the participant's contact that wrote last on a channel", async () => {
      const { p } = await setup();
      await store().setContactOptOut('whatsapp', 'never-wrote', null, at(1));
      await store().recordContactInbound(
        { channel: 'whatsapp', contactId: 'old', participantId: p.id, phoneNumber: null },
        at(1000),
      );
      await store().recordContactInbound(
        { channel: 'whatsapp', contactId: 'new', participantId: p.id, phoneNumber: null },
        at(2000),
      );
      await store().recordContactInbound(
        { channel: 'twilio', contactId: p.phoneNumber, participantId: p.id, phoneNumber: p.phoneNumber },
        at(3000),
      );
      expect((await store().findContactOfParticipant('whatsapp', p.id))?.contactId).toBe('new');
      expect((await store().findContactOfParticipant('twilio', p.id))?.contactId).toBe(p.phoneNumber);
      expect(await store().findContactOfParticipant('webhook', p.id)).toBeUndefined();
    });

    it('records opt-out and opt-in, creating the contact when needed; keeps it when the participant goes', async () => {
      const { p } = await setup();
      await store().recordContactInbound(
        { channel: 'twilio', contactId: p.phoneNumber, participantId: p.id, phoneNumber: p.phoneNumber },
        at(1000),
      );
      expect(await store().setContactOptOut('twilio', p.phoneNumber, at(2000), at(2000))).toMatchObject({
        optedOutAt: at(2000),
        participantId: p.id,
        lastInboundAt: at(1000),
      });
      expect(await store().setContactOptOut('twilio', '+15550001111', at(2500), at(2500))).toMatchObject({
        optedOutAt: at(2500),
        participantId: null,
      });
      await store().deleteParticipant(p.id);
      expect(await store().getContact('twilio', p.phoneNumber)).toMatchObject({
        optedOutAt: at(2000),
        participantId: null,
      });
      expect(await store().setContactOptOut('twilio', p.phoneNumber, null, at(3000))).toMatchObject({
        optedOutAt: null,
      });
    });
  });

  describe('delivery receipts', () => {
    const sentItem = async (providerMessageId: string | null) => {
      const { c } = await setup();
      const item = outboxItem(c.id, { channel: 'whatsapp' });
      await store().enqueueOutbox([item]);
      if (providerMessageId) await store().markOutboxSent(item.id, at(100), 1, providerMessageId);
      return item;
    };
    const receipt = (providerMessageId: string, status: DeliveryStatus, ms: number, error: string | null = null) => ({
      channel: 'whatsapp',
      providerMessageId,
      status,
      at: at(ms),
      error,
    });

    it('keeps the highest status whatever order receipts come in, and reports duplicates', async () => {
      const item = await sentItem('wamid.A');
      expect(await store().getOutbox(item.id)).toMatchObject({
        status: 'sent',
        providerMessageId: 'wamid.A',
        deliveryStatus: null,
      });
      expect(await store().recordDeliveryReceipt(receipt('wamid.A', 'read', 3000))).toEqual({
        duplicate: false,
        outboxId: item.id,
      });
      expect(await store().recordDeliveryReceipt(receipt('wamid.A', 'delivered', 2000))).toEqual({
        duplicate: false,
        outboxId: item.id,
      });
      expect(await store().recordDeliveryReceipt(receipt('wamid.A', 'sent', 1000))).toEqual({
        duplicate: false,
        outboxId: item.id,
      });
      expect(await store().recordDeliveryReceipt(receipt('wamid.A', 'read', 3000))).toEqual({
        duplicate: true,
        outboxId: item.id,
      });
      expect(await store().getOutbox(item.id)).toMatchObject({
        deliveryStatus: 'read',
        deliveryStatusAt: at(3000),
        deliveryError: null,
      });
    });

    it('ranks failed above sent and below delivered, keeping the error', async () => {
      const item = await sentItem('wamid.F');
      await store().recordDeliveryReceipt(receipt('wamid.F', 'sent', 1000));
      await store().recordDeliveryReceipt(receipt('wamid.F', 'failed', 2000, '131026 Message undeliverable'));
      expect(await store().getOutbox(item.id)).toMatchObject({
        deliveryStatus: 'failed',
        deliveryError: '131026 Message undeliverable',
      });
      await store().recordDeliveryReceipt(receipt('wamid.F', 'delivered', 1500));
      expect(await store().getOutbox(item.id)).toMatchObject({
        deliveryStatus: 'delivered',
        deliveryError: '131026 Message undeliverable',
      });
    });

    it('applies receipts that arrived before the send was recorded', async () => {
      const item = await sentItem(null);
      expect(await store().recordDeliveryReceipt(receipt('wamid.EARLY', 'delivered', 2000))).toEqual({
        duplicate: false,
        outboxId: null,
      });
      expect(await store().recordDeliveryReceipt(receipt('wamid.EARLY', 'sent', 1000))).toEqual({
        duplicate: false,
        outboxId: null,
      });
      await store().markOutboxSent(item.id, at(2500), 1, 'wamid.EARLY');
      expect(await store().getOutbox(item.id)).toMatchObject({
        status: 'sent',
        providerMessageId: 'wamid.EARLY',
        deliveryStatus: 'delivered',
        deliveryStatusAt: at(2000),
      });
    });

    it('keeps channels apart', async () => {
      const item = await sentItem('SM1');
      expect(await store().recordDeliveryReceipt({ ...receipt('SM1', 'read', 1000), channel: 'twilio' })).toEqual({
        duplicate: false,
        outboxId: null,
      });
      expect((await store().getOutbox(item.id))!.deliveryStatus).toBeNull();
    });

    it('is monotonic under concurrent receipts', async () => {
      const item = await sentItem('wamid.C');
      const statuses: DeliveryStatus[] = ['sent', 'delivered', 'read', 'failed', 'sent', 'delivered'];
      await Promise.all(
        statuses.map((status, i) => store().recordDeliveryReceipt(receipt('wamid.C', status, 1000 + i))),
      );
      expect((await store().getOutbox(item.id))!.deliveryStatus).toBe('read');
    });
  });

  describe('conversation channel', () => {
    it('moves replies to another channel without touching the version', async () => {
      const { c } = await setup();
      await store().setConversationChannel(c.id, 'twilio', at(7000));
      expect(await store().getConversation(c.id)).toMatchObject({
        channel: 'twilio',
        version: c.version,
        updatedAt: at(7000),
      });
      await store().setConversationChannel(c.id, 'twilio', at(8000));
      expect((await store().getConversation(c.id))!.updatedAt).toEqual(at(7000));
    });
  });
}
