import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';

/**
 * An MCP server over streamable HTTP on a loopback port, any free one by default (stateless: one transport per
 * request).
 */
export async function startMcpHttpServer(
  build: () => McpServer,
  port = 0,
): Promise<{ url: string; port: number; close(): Promise<void> }> {
  const http: Server = createServer(async (request, response) => {
    const server = build();
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
    response.on('close', () => void transport.close().then(() => server.close()));
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const body = chunks.length > 0 ? JSON.parse(Buffer.concat(chunks).toString('utf8')) : undefined;
    await server.connect(transport);
    await transport.handleRequest(request, response, body);
  });
  await new Promise<void>((resolve) => http.listen(port, '127.0.0.1', resolve));
  const bound = (http.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${bound}/mcp`,
    port: bound,
    close: () =>
      new Promise<void>((resolve) => {
        http.closeAllConnections();
        http.close(() => resolve());
      }),
  };
}
