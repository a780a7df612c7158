import { EventClient } from './event-client.ts';
import type { TestServer } from './test-server.ts';
import { waitFor } from './wait-for.ts';

/**
 * A web session of a participant-less flow (the service desk, the assistant): started over
 * HTTP, followed over the WebSocket from its first event, greeting awaited. `say` sends a
 * message and resolves with the `final` event that answers it.
 */
export async function openWebSession(server: TestServer, flow: string) {
  const id = (await server.request('POST', '/api/conversations', { flow })).body.result.id as string;
  const client = await EventClient.connect(server.url, id, '?lastEventId=0');
  await waitFor(() => client.of('final').length === 1, { what: 'greeting' });
  const say = async (text: string): Promise<{ text: string }> => {
    const before = client.of('final').length;
    const answer = await server.request('POST', `/api/conversations/${id}/message`, { text });
    if (answer.status >= 300) throw new Error(`message refused: ${JSON.stringify(answer.body)}`);
    await waitFor(() => client.of('final').length > before, { what: `reply to ${text}` });
    return client.of('final').at(-1) as { text: string };
  };
  return { id, client, say };
}
