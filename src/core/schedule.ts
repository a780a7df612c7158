/** A recurring daily habit-prompt schedule of one participant. */
export type ScheduleKind = 'fixed' | 'random';

export interface Schedule {
  id: string;
  participantId: string;
  kind: ScheduleKind;
  /** `HH:MM`, 24-hour, for fixed schedules. */
  fixedTime: string | null;
  /** `HH:MM` window for random schedules: a new random time inside it each day. */
  windowStart: string | null;
  windowEnd: string | null;
  /** IANA zone the times are read in. */
  timezone: string;
  /** Minutes before the target time the prompt is sent. */
  prepMinutes: number;
  createdAt: Date;
}
