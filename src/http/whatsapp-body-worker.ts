import { parentPort } from 'node:worker_threads';
import type { WhatsAppWebhook } from '../channels/whatsapp/whatsapp-webhook.ts';
import { errorAnswer, readWhatsAppBodyNow, type PartsAnswer, type PartsRequest } from './whatsapp-body.ts';

/** The worker thread of `readWhatsAppBody`: parses large webhook bodies and hands them over a part at a time. */
const open = new Map<number, Iterator<WhatsAppWebhook, void, void>>();
const port = parentPort!;

port.on('message', (request: PartsRequest) => {
  if (request.type === 'close') {
    open.delete(request.id);
    return;
  }
  const answer = (message: PartsAnswer) => port.postMessage(message);
  try {
    if (request.type === 'open') open.set(request.id, readWhatsAppBodyNow(request.body, request.size));
    const result = open.get(request.id)?.next();
    if (!result || result.done) {
      open.delete(request.id);
      answer({ id: request.id, type: 'end' });
    } else answer({ id: request.id, type: 'part', part: result.value });
  } catch (error) {
    open.delete(request.id);
    answer(errorAnswer(request.id, error));
  }
});
