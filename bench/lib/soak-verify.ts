// The soak's end-of-run checks: the harness's ledger of acknowledged messages and what the fake
// providers received, against the rows the server left in the database. Pure: rows in, a report
// out (test/soak/soak-verify.test.ts feeds it broken data to show each check can fail).

/** One message the server acknowledged (2xx with an id), as the harness sent it. */
export interface LedgerEntry {
  /** The harness's name for the sender: `http:3`, `whatsapp:40`, `web:assistant:1`, … */
  sender: string;
  /** The inbox channel it arrives on: `http`, `whatsapp`, `twilio` or `web`. */
  channel: string;
  /** The id the inbox deduplicates on, as stored (`channel_message_id`). */
  channelMessageId: string;
  /** The inbox `sender` the server should record. */
  expectedSender: string;
  text: string;
  /** A marker unique to this message, contained in its text (`ref bcdf`). */
  tag: string;
  /** Position in the sender's sequence (each sender sends one message at a time, in order). */
  seq: number;
  /** The inbox id the acknowledgement named, when the route returns one. */
  inboxId: string | null;
  /** The first attempt was answered "already received": the server took a new message for another one. */
  duplicateOnFirstAttempt: boolean;
  attempts: number;
}

/** A new message the server refused (e.g. 409 message_id_reused for an id another sender used). */
export interface RefusedEntry {
  sender: string;
  channelMessageId: string;
  status: number;
  code: string;
}

export interface InboxRow {
  id: string;
  ordinal: number;
  channel: string;
  channel_message_id: string | null;
  sender: string;
  text: string;
  conversation_id: string | null;
  status: string;
  error: string | null;
}
export interface TurnRow {
  id: string;
  conversation_id: string;
  inbox_id: string | null;
  status: string;
  trigger: string;
  error: string | null;
}
export interface MessageRow {
  conversation_id: string;
  seq: number;
  id: string;
  role: string;
  kind: string;
  text: string;
  source: string;
  turn_id: string | null;
}
export interface OutboxRow {
  id: string;
  ordinal: number;
  conversation_id: string;
  channel: string;
  recipient: string;
  text: string;
  idempotency_key: string;
  status: string;
  attempts: number;
  next_attempt_at: number;
  last_error: string | null;
  provider_message_id: string | null;
}
export interface TimerRow {
  id: string;
  kind: string;
  conversation_id: string;
  due_at: number;
  status: string;
  attempts: number;
  last_error: string | null;
  payload: string;
}

export interface Rows {
  inbox: InboxRow[];
  turns: TurnRow[];
  messages: MessageRow[];
  outbox: OutboxRow[];
  timers: TimerRow[];
}

/** What the fakes accepted, in arrival order. */
export interface Deliveries {
  /** WhatsApp sends, by the wamid the fake answered with. */
  whatsapp: string[];
  /** Twilio sends, by the Message SID the fake answered with. */
  twilio: string[];
  /** Every webhook POST the sink received, by Idempotency-Key (repeats included). */
  webhook: string[];
}

/** Texts of the habit flow's timer messages, to count what the timers sent. */
export interface TimerTexts {
  donePoll: string;
  reminder: string;
  nudges: string[];
}

export interface Finding {
  check: 'stored' | 'answered' | 'order' | 'delivered' | 'timers' | 'refused' | 'memory';
  detail: string;
}

export interface VerifyInput {
  ledger: LedgerEntry[];
  refused: RefusedEntry[];
  rows: Rows;
  deliveries: Deliveries;
  /** The server clock at the end (epoch ms): timers due by then must have fired. */
  now: number;
  texts: TimerTexts;
  /**
   * Web sessions followed over their event stream (SSE, resumed with Last-Event-ID across restarts): the message ids
   * of the `final` events seen.
   */
  streams?: Array<{
    conversationId: string;
    finals: ReadonlySet<string>;
    fullSnapshots: ReadonlySet<string>;
    partialSnapshots: ReadonlySet<string>;
  }>;
}

export interface VerifyReport {
  counts: Record<string, number>;
  violations: Finding[];
  /**
   * Visible, documented outcomes worth knowing (a turn that failed with an apology, a delivery that failed with an
   * error).
   */
  warnings: Finding[];
}

const groupBy = <T, K>(items: T[], key: (item: T) => K): Map<K, T[]> => {
  const map = new Map<K, T[]>();
  for (const item of items) {
    const k = key(item);
    const list = map.get(k);
    if (list) list.push(item);
    else map.set(k, [item]);
  }
  return map;
};

const short = (text: string, length = 60) => (text.length > length ? `${text.slice(0, length)}…` : text);

export function verify(input: VerifyInput): VerifyReport {
  const { ledger, refused, rows, deliveries, now, texts } = input;
  const violations: Finding[] = [];
  const warnings: Finding[] = [];
  const counts: Record<string, number> = {};
  const count = (name: string, by = 1) => (counts[name] = (counts[name] ?? 0) + by);

  // The server deduplicates message ids per sender (decision 008).
  const inboxByKey = new Map(
    rows.inbox
      .filter((row) => row.channel_message_id !== null)
      .map((row) => [`${row.channel}\u0000${row.sender}\u0000${row.channel_message_id}`, row]),
  );
  const turnsByInbox = groupBy(
    rows.turns.filter((turn) => turn.inbox_id !== null),
    (turn) => turn.inbox_id!,
  );
  const messagesByTurn = groupBy(
    rows.messages.filter((message) => message.turn_id !== null),
    (message) => message.turn_id!,
  );
  const messagesByConversation = groupBy(rows.messages, (message) => message.conversation_id);
  const outboxByKey = groupBy(rows.outbox, (item) => item.idempotency_key.split('#')[0]!);

  // --- Every acknowledged message stored once and answered once -----------------------------
  /** Per ledger entry: the seq of its user message in the transcript, for the order check. */
  const transcriptSeq = new Map<LedgerEntry, { conversationId: string; seq: number }>();
  for (const entry of ledger) {
    count(`acknowledged.${entry.channel}`);
    const who = `${entry.sender} message #${entry.seq} (${entry.channel} id ${entry.channelMessageId})`;
    if (entry.duplicateOnFirstAttempt)
      violations.push({
        check: 'stored',
        detail: `${who}: a new message was acknowledged as "already received" on its first attempt`,
      });
    const row = inboxByKey.get(`${entry.channel}\u0000${entry.expectedSender}\u0000${entry.channelMessageId}`);
    if (!row) {
      const asId = entry.inboxId ? ` as ${entry.inboxId}` : '';
      violations.push({ check: 'stored', detail: `${who}: acknowledged${asId} but no inbox row has its message id` });
      continue;
    }
    if (entry.inboxId !== null && row.id !== entry.inboxId) {
      violations.push({
        check: 'stored',
        detail: `${who}: acknowledged as ${entry.inboxId}, but its message id is on inbox row ${row.id}`,
      });
    }
    if (row.sender !== entry.expectedSender || !row.text.includes(entry.tag)) {
      violations.push({
        check: 'stored',
        detail:
          `${who}: its message id is on inbox row ${row.id} from ${row.sender} saying "${short(row.text)}", ` +
          `not this sender's "${short(entry.text)}"`,
      });
      continue;
    }
    const userCopies =
      row.conversation_id === null
        ? []
        : (messagesByConversation.get(row.conversation_id) ?? []).filter(
            (message) => message.role === 'user' && message.text.includes(entry.tag),
          );
    if (userCopies.length !== 1) {
      violations.push({ check: 'stored', detail: `${who}: appears ${userCopies.length} times in the transcript` });
    } else {
      transcriptSeq.set(entry, { conversationId: row.conversation_id!, seq: userCopies[0]!.seq });
    }

    switch (row.status) {
      case 'pending':
        violations.push({
          check: 'answered',
          detail: `${who}: still pending in the inbox after the drain (${row.id})`,
        });
        continue;
      case 'failed':
        count('answered.apology');
        warnings.push({
          check: 'answered',
          detail:
            `${who}: its turn failed for good; the apology was sent ` +
            `(${short(row.error ?? 'no error recorded', 160)})`,
        });
        continue;
      case 'ignored':
        count('answered.ignored');
        warnings.push({ check: 'answered', detail: `${who}: ignored (participant not active)` });
        continue;
    }
    const turns = turnsByInbox.get(row.id) ?? [];
    if (turns.length !== 1) {
      violations.push({
        check: 'answered',
        detail:
          `${who}: ${row.status}, answered by ${turns.length} turns` +
          (turns.length ? ` (${turns.map((turn) => turn.id).join(', ')})` : ''),
      });
      continue;
    }
    const turn = turns[0]!;
    const replies = (messagesByTurn.get(turn.id) ?? []).filter((message) => message.source === 'model');
    if (turn.status === 'cancelled') {
      count('answered.cancelled');
      continue;
    }
    if (replies.length !== 1) {
      violations.push({ check: 'answered', detail: `${who}: turn ${turn.id} has ${replies.length} model replies` });
      continue;
    }
    count('answered.once');
    if (turn.status === 'failed') {
      count('answered.model-apology');
      warnings.push({
        check: 'answered',
        detail: `${who}: the model failed; the turn's apology was sent (${short(turn.error ?? '', 160)})`,
      });
    }
    if (!outboxByKey.has(replies[0]!.id))
      violations.push({
        check: 'delivered',
        detail: `${who}: its reply ${replies[0]!.id} was never queued for delivery`,
      });
  }

  // --- In order per sender ---------------------------------------------------------------
  for (const [sender, entries] of groupBy(ledger, (entry) => entry.sender)) {
    const placed = entries.filter((entry) => transcriptSeq.has(entry)).sort((a, b) => a.seq - b.seq);
    let reported = 0;
    for (let index = 1; index < placed.length && reported < 3; index++) {
      const before = transcriptSeq.get(placed[index - 1]!)!;
      const after = transcriptSeq.get(placed[index]!)!;
      if (before.conversationId !== after.conversationId || after.seq <= before.seq) {
        reported += 1;
        violations.push({
          check: 'order',
          detail:
            `${sender}: message #${placed[index]!.seq} is at transcript position ${after.seq}, ` +
            `before #${placed[index - 1]!.seq} at ${before.seq}`,
        });
      }
    }
  }

  for (const entry of refused) {
    count('refused');
    violations.push({
      check: 'refused',
      detail:
        `${entry.sender}: a new message (id ${entry.channelMessageId}) ` +
        `was refused with ${entry.status} ${entry.code}`,
    });
  }

  // --- No inbox item left unanswered, no inbox item answered twice (whoever sent it) --------
  for (const row of rows.inbox) count(`inbox.${row.status}`);
  for (const row of rows.inbox.filter((item) => item.status === 'pending')) {
    if (
      !ledger.some(
        (entry) =>
          entry.channel === row.channel &&
          entry.expectedSender === row.sender &&
          entry.channelMessageId === row.channel_message_id,
      )
    ) {
      violations.push({
        check: 'answered',
        detail:
          `inbox ${row.id} (${row.channel} ${row.channel_message_id}, never acknowledged to the harness) ` +
          'is still pending after the drain',
      });
    }
  }
  for (const [inboxId, turns] of turnsByInbox) {
    if (turns.length > 1 && !ledger.some((entry) => entry.inboxId === inboxId)) {
      violations.push({ check: 'answered', detail: `inbox ${inboxId} was answered by ${turns.length} turns` });
    }
  }

  // --- Every delivery made or failed visibly ----------------------------------------------
  const whatsappIndex = new Map(deliveries.whatsapp.map((id, index) => [id, index]));
  const twilioIndex = new Map(deliveries.twilio.map((id, index) => [id, index]));
  const webhookIndex = new Map<string, number>();
  deliveries.webhook.forEach((key, index) => webhookIndex.has(key) || webhookIndex.set(key, index));
  const deliveredAt = (item: OutboxRow): number | undefined => {
    if (item.channel === 'whatsapp')
      return item.provider_message_id ? whatsappIndex.get(item.provider_message_id) : undefined;
    if (item.channel === 'twilio')
      return item.provider_message_id ? twilioIndex.get(item.provider_message_id) : undefined;
    if (item.channel === 'webhook') return webhookIndex.get(item.idempotency_key);
    return -1; // the web channel hands nothing over: its event stream carries the message
  };
  for (const item of rows.outbox) {
    count(`outbox.${item.status}`);
    if (item.status === 'pending') {
      const due = item.next_attempt_at <= now ? 'due' : `next attempt ${new Date(item.next_attempt_at).toISOString()}`;
      violations.push({
        check: 'delivered',
        detail:
          `outbox ${item.id} (${item.channel} to ${item.recipient}) stuck pending after the drain: ` +
          `${item.attempts} attempts, ${due}${item.last_error ? `, last error ${short(item.last_error, 120)}` : ''}`,
      });
    } else if (item.status === 'failed') {
      if (item.last_error)
        warnings.push({
          check: 'delivered',
          detail:
            `outbox ${item.id} (${item.channel} to ${item.recipient}) failed visibly ` +
            `after ${item.attempts} attempts: ${short(item.last_error, 160)}`,
        });
      else
        violations.push({
          check: 'delivered',
          detail: `outbox ${item.id} (${item.channel} to ${item.recipient}) failed without an error`,
        });
    } else if (item.status === 'sent' && deliveredAt(item) === undefined) {
      violations.push({
        check: 'delivered',
        detail:
          `outbox ${item.id} (${item.channel} to ${item.recipient}) is marked sent, ` +
          `but the ${item.channel} fake never accepted it (${item.provider_message_id ?? item.idempotency_key})`,
      });
    }
  }
  // In order per conversation: what was handed over follows the outbox order.
  for (const [conversationId, items] of groupBy(
    rows.outbox.filter((item) => item.status === 'sent'),
    (item) => item.conversation_id,
  )) {
    const ordered = items
      .sort((a, b) => a.ordinal - b.ordinal)
      .map((item) => ({ item, at: deliveredAt(item) }))
      .filter((x) => x.at !== undefined && x.at >= 0);
    for (let index = 1; index < ordered.length; index++) {
      if (ordered[index]!.at! < ordered[index - 1]!.at!) {
        violations.push({
          check: 'order',
          detail:
            `conversation ${conversationId}: outbox ${ordered[index]!.item.id} ` +
            `reached the ${ordered[index]!.item.channel} fake before ${ordered[index - 1]!.item.id}, queued before it`,
        });
        break;
      }
    }
  }
  // Provider sends the store never recorded: re-sends after a crash between send and record
  // (documented: at least once, same key).
  const recordedIds = new Set(
    rows.outbox.map((item) => item.provider_message_id).filter((id): id is string => id !== null),
  );
  count('deliveries.whatsapp', deliveries.whatsapp.length);
  count('deliveries.twilio', deliveries.twilio.length);
  count('deliveries.webhook', deliveries.webhook.length);
  count(
    'deliveries.unrecorded-resends',
    deliveries.whatsapp.filter((id) => !recordedIds.has(id)).length +
      deliveries.twilio.filter((id) => !recordedIds.has(id)).length +
      (deliveries.webhook.length - webhookIndex.size),
  );

  // Web sessions: every committed reply reached the session's event stream as a `final` event.
  for (const stream of input.streams ?? []) {
    const replies = (messagesByConversation.get(stream.conversationId) ?? []).filter(
      (message) => message.role === 'assistant' && message.source === 'model',
    );
    count('stream.replies', replies.length);
    const missing = replies.filter(
      (message) => !stream.finals.has(message.id) && !stream.fullSnapshots.has(message.id),
    );
    count('stream.missing', missing.length);
    if (missing.length > 0) {
      const inPartial = missing.filter((message) => stream.partialSnapshots.has(message.id)).length;
      violations.push({
        check: 'delivered',
        detail:
          `web session ${stream.conversationId}: ${missing.length} of ${replies.length} committed replies ` +
          'never reached its event stream as a final event or in a full resync ' +
          `(e.g. ${missing[0]!.id} "${short(missing[0]!.text, 40)}"; ` +
          `${inPartial} of them only in the transcript of a partial resync)`,
      });
    }
  }

  // --- Every due timer fired once -----------------------------------------------------------
  for (const timer of rows.timers) {
    count(`timers.${timer.status}`);
    if ((timer.status === 'pending' || timer.status === 'running') && timer.due_at <= now) {
      violations.push({
        check: 'timers',
        detail:
          `timer ${timer.id} (${timer.kind}) due ${new Date(timer.due_at).toISOString()} ` +
          `is still ${timer.status} at ${new Date(now).toISOString()} (${timer.attempts} attempts)`,
      });
    }
    if (timer.status === 'failed')
      violations.push({
        check: 'timers',
        detail:
          `timer ${timer.id} (${timer.kind}) failed for good ` +
          `after ${timer.attempts} attempts: ${short(timer.last_error ?? 'no error', 160)}`,
      });
    if (timer.status === 'done' && timer.attempts > 1) count('timers.done-after-a-retry');
  }
  // Done twice: a timer's effects commit with its completion, so what the timers sent is counted against what
  // completed.
  const timersByConversation = groupBy(
    rows.timers.filter((timer) => timer.status === 'done'),
    (timer) => timer.conversation_id,
  );
  for (const [conversationId, messages] of messagesByConversation) {
    const done = timersByConversation.get(conversationId) ?? [];
    const fromTimers = messages.filter((message) => message.source === 'timer');
    const limits: Array<[string, number, number]> = [
      [
        'daily prompts',
        fromTimers.filter((message) => message.kind === 'poll' && message.text === texts.donePoll).length,
        done.filter((timer) => timer.kind === 'daily-prompt').length,
      ],
      [
        'reminders',
        fromTimers.filter((message) => message.text === texts.reminder).length,
        done.filter((timer) => timer.kind === 'reminder').length,
      ],
      [
        'feedback nudges',
        fromTimers.filter((message) => texts.nudges.includes(message.text)).length,
        done.filter((timer) => timer.kind === 'feedback-nudge').length,
      ],
    ];
    for (const [what, sent, completed] of limits) {
      count(`timer-messages.${what}`, sent);
      if (sent > completed)
        violations.push({
          check: 'timers',
          detail:
            `conversation ${conversationId}: ${sent} ${what} sent, ` +
            `but only ${completed} such timers completed (a timer's effects committed twice)`,
        });
    }
  }
  return { counts, violations, warnings };
}

/** Least-squares slope of y over x (per unit of x); NaN with fewer than two points. */
export function slope(points: Array<[number, number]>): number {
  if (points.length < 2) return Number.NaN;
  const mx = points.reduce((sum, [x]) => sum + x, 0) / points.length;
  const my = points.reduce((sum, [, y]) => sum + y, 0) / points.length;
  const num = points.reduce((sum, [x, y]) => sum + (x - mx) * (y - my), 0);
  const den = points.reduce((sum, [x]) => sum + (x - mx) ** 2, 0);
  return den === 0 ? Number.NaN : num / den;
}

export interface Life {
  life: number;
  pid: number;
  /** Seconds since the run started. */
  startedAtS: number;
  endedAtS: number | null;
  ended: string;
  /** [seconds since the run started, RSS MiB] */
  samples: Array<[number, number]>;
}

export interface MemoryReport {
  lives: Array<{
    life: number;
    pid: number;
    startedAtS: number;
    endedAtS: number | null;
    ended: string;
    samples: number;
    startMiB: number;
    endMiB: number;
    maxMiB: number;
  }>;
  /** Trend of each life's peak over the run, MiB per minute. */
  peakTrendMiBPerMin: number;
  /** Trend of RSS at a common age (the sample nearest `atAgeS` into each life), MiB per minute. */
  sameAgeTrendMiBPerMin: number;
  atAgeS: number;
  verdict: string;
  flat: boolean | null;
}

/**
 * Flat means the later lives do not use more than the early ones: the mean peak of the last third
 * of lives within 25 % of the first third's (judged only with 6 lives or more: the server is
 * killed every 30 s, so each life starts from scratch and only a trend across lives can show a leak
 * in state that survives restarts, like an ever-growing table read at start-up).
 */
export function memoryReport(lives: Life[], atAgeS = 20): MemoryReport {
  const judged = lives.filter((life) => life.samples.length > 0);
  const rows = judged.map((life) => {
    const values = life.samples.map(([, rss]) => rss);
    return {
      life: life.life,
      pid: life.pid,
      startedAtS: life.startedAtS,
      endedAtS: life.endedAtS,
      ended: life.ended,
      samples: values.length,
      startMiB: values[0]!,
      endMiB: values.at(-1)!,
      maxMiB: Math.max(...values),
    };
  });
  const peakTrend = slope(rows.map((row) => [row.startedAtS / 60, row.maxMiB]));
  const sameAge = judged
    .map((life) =>
      life.samples.reduce<[number, number] | undefined>(
        (best, sample) =>
          !best || Math.abs(sample[0] - life.startedAtS - atAgeS) < Math.abs(best[0] - life.startedAtS - atAgeS)
            ? sample
            : best,
        undefined,
      ),
    )
    .filter((sample): sample is [number, number] => sample !== undefined);
  const sameAgeTrend = slope(sameAge.map(([t, rss]) => [t / 60, rss]));
  let flat: boolean | null = null;
  let verdict = `too few server lives (${rows.length}) to judge a trend; need 6`;
  if (rows.length >= 6) {
    const third = Math.floor(rows.length / 3);
    const mean = (list: typeof rows) => list.reduce((sum, row) => sum + row.maxMiB, 0) / list.length;
    const early = mean(rows.slice(0, third));
    const late = mean(rows.slice(-third));
    flat = late <= early * 1.25;
    verdict =
      `mean peak of the first ${third} lives ${early.toFixed(1)} MiB, of the last ${third} ${late.toFixed(1)} MiB ` +
      `(${flat ? 'flat: within 25 %' : 'GROWING: more than 25 % higher'})`;
  }
  return { lives: rows, peakTrendMiBPerMin: peakTrend, sameAgeTrendMiBPerMin: sameAgeTrend, atAgeS, verdict, flat };
}
