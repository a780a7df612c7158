import yauzl, { type Entry } from 'yauzl';

/** The entries of a ZIP file, by name, as UTF-8 text, in archive order (test-sized archives only). */
export async function unzipText(buffer: Buffer): Promise<Map<string, string>> {
  const zip = await yauzl.fromBufferPromise(buffer, { lazyEntries: true });
  const entries: Entry[] = await new Promise((resolve, reject) => {
    const found: Entry[] = [];
    zip.on('entry', (entry: Entry) => {
      found.push(entry);
      zip.readEntry();
    });
    zip.on('end', () => resolve(found));
    zip.on('error', reject);
    zip.readEntry();
  });
  const files = new Map<string, string>();
  for (const entry of entries) {
    const chunks: Buffer[] = [];
    for await (const chunk of await zip.openReadStreamPromise(entry)) chunks.push(chunk as Buffer);
    files.set(entry.fileName, Buffer.concat(chunks).toString('utf8'));
  }
  zip.close();
  return files;
}
