/** One sample of the Prometheus text exposition format. */
export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

// Values as Prometheus reads them (Go's ParseFloat: NaN and Inf in any case; prom-client writes `Nan`).
const SAMPLE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? ([+-]?(?:[0-9.]+(?:e[+-]?\d+)?|nan|inf))(?: -?\d+)?$/i;
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"(?:,|$)/g;
const TYPES = new Set(['counter', 'gauge', 'histogram', 'summary', 'untyped']);

/**
 * Parses the text format strictly (format 0.0.4): every line is a comment, a HELP or TYPE line, or
 * a sample of a metric whose TYPE came first; anything else throws, naming the line.
 */
export function parsePrometheusText(text: string): Sample[] {
  const typed = new Map<string, string>();
  const samples: Sample[] = [];
  for (const [index, line] of text.split('\n').entries()) {
    if (line === '' || line.startsWith('# HELP ')) continue;
    if (line.startsWith('# TYPE ')) {
      const [, , name, type] = line.split(' ');
      if (!name || !type || !TYPES.has(type)) throw new Error(`line ${index + 1}: bad TYPE line: ${line}`);
      typed.set(name, type);
      continue;
    }
    const match = SAMPLE.exec(line);
    if (!match) throw new Error(`line ${index + 1}: not a sample: ${line}`);
    const [, name, labelText = '', value] = match;
    const family = name!.replace(/_(bucket|sum|count|total|created)$/, '');
    if (!typed.has(name!) && !typed.has(family)) throw new Error(`line ${index + 1}: ${name} has no TYPE`);
    const labels: Record<string, string> = {};
    let consumed = 0;
    for (const label of labelText.matchAll(LABEL)) {
      labels[label[1]!] = label[2]!.replace(/\\(.)/g, (_, c: string) => (c === 'n' ? '\n' : c));
      consumed += label[0].length;
    }
    if (consumed !== labelText.length) throw new Error(`line ${index + 1}: bad labels: ${labelText}`);
    samples.push({
      name: name!,
      labels,
      value: /nan/i.test(value!)
        ? NaN
        : /inf/i.test(value!)
          ? value!.startsWith('-')
            ? -Infinity
            : Infinity
          : Number(value),
    });
  }
  return samples;
}

/** The value of the sample with this name and (at least) these labels; 0 when there is none. */
export function sampleValue(samples: readonly Sample[], name: string, labels: Record<string, string> = {}): number {
  const found = samples.find(
    (sample) => sample.name === name && Object.entries(labels).every(([key, value]) => sample.labels[key] === value),
  );
  return found?.value ?? 0;
}
