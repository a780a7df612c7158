/**
 * Lines of a text tool protocol some models echo (`TOOL_CALL: …`, `<tool_call>…</tool_call>`,
 * `[TOOL_CALLS]`): never shown to a person, neither in the final reply nor while it streams.
 * Case-sensitive, so prose such as "Tool: a chisel" stays.
 */
const MARKERS = [
  'TOOL:',
  'TOOL_CALL:',
  'TOOL_CALLS:',
  'TOOL_RESULT:',
  '[TOOL_CALLS]',
  '<tool_call>',
  '</tool_call>',
  '<tool_response>',
  '</tool_response>',
  '<|tool_call',
] as const;
/** Markers that open a block whose lines are dropped up to the closing tag. */
const BLOCKS: Record<string, string> = { '<tool_call>': '</tool_call>', '<tool_response>': '</tool_response>' };

const markerOf = (line: string) => MARKERS.find((marker) => line.trimStart().startsWith(marker));

export function stripToolMarkers(text: string): string {
  const kept: string[] = [];
  const filter = createMarkerFilter((piece) => kept.push(piece));
  filter.push(text);
  filter.flush();
  return kept.join('').trim();
}

export interface MarkerFilter {
  push(delta: string): void;
  /** The end of one model call's text: releases a held line that turned out not to be a marker. */
  flush(): void;
}

/**
 * Streams text through, holding back the start of each line only while it could still be a
 * marker; marker lines (and tool blocks) are dropped whole.
 */
export function createMarkerFilter(emit: (text: string) => void): MarkerFilter {
  let line = '';
  let mode: 'deciding' | 'passing' | 'dropping' = 'deciding';
  let blockEnd: string | null = null;

  const endLine = () => {
    if (mode === 'dropping' && blockEnd !== null && line.includes(blockEnd)) blockEnd = null;
    line = '';
    mode = blockEnd === null ? 'deciding' : 'dropping';
  };
  const decide = (): typeof mode => {
    const marker = markerOf(line);
    if (marker) {
      if (BLOCKS[marker] && !line.includes(BLOCKS[marker])) blockEnd = BLOCKS[marker];
      return 'dropping';
    }
    const start = line.trimStart();
    return MARKERS.some((candidate) => candidate.startsWith(start)) ? 'deciding' : 'passing';
  };

  return {
    push(delta) {
      let out = '';
      for (const character of delta) {
        if (mode === 'passing') {
          out += character;
          if (character === '\n') endLine();
          continue;
        }
        line += character;
        if (character === '\n') {
          if (mode === 'deciding') out += line;
          endLine();
          continue;
        }
        if (mode === 'dropping') continue;
        mode = decide();
        if (mode === 'passing') out += line;
      }
      if (out) emit(out);
    },
    flush() {
      if (mode === 'deciding' && line) emit(line);
      line = '';
      mode = 'deciding';
      blockEnd = null;
    },
  };
}
