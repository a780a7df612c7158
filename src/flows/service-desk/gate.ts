import { z } from 'zod';
import { describeIssues } from '../../tools/define-tool.ts';
import { INTENTS, verificationLocked, type Dialog, type Intent } from './dialog.ts';
import { deskTool, type DeskTool } from './desk-tools.ts';

/**
 * What the decision call may propose: a tool, a choice the dialog is waiting for, or just an
 * answer. Validated before anything runs ("model proposes, code disposes", decision 005).
 */
export const actionPlanSchema = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('tool'), name: z.string().min(1).max(64), arguments: z.unknown() }),
  z.object({ kind: z.literal('answer') }),
]);
export type ActionPlan = z.infer<typeof actionPlanSchema>;

/** The choices the interpreter makes, offered to the model as tools in the states that expect them. */
export const CHOICES = {
  note_intent: z.object({ intent: z.enum(INTENTS) }),
  confirm: z.object({ answer: z.enum(['yes', 'no']) }),
  select_appointment: z.object({ appointmentId: z.string().min(1).max(100) }),
  select_slot: z.object({ slotId: z.string().min(1).max(100) }),
  confirm_address: z.object({ confirmed: z.boolean() }),
  decline: z.object({}),
  schedule_new_visit: z.object({}),
  clarify_intent: z.object({ candidates: z.array(z.enum(INTENTS)).min(2).max(3) }),
  pick_intent: z.object({ intent: z.enum(INTENTS) }),
  callback_number: z.object({ phone: z.string().min(1).max(120) }),
  unsupported_request: z.object({}),
} as const;
export type ChoiceName = keyof typeof CHOICES;

export type GateDecision =
  | { decision: 'run'; tool: DeskTool; input: unknown }
  | { decision: 'choice'; choice: ChoiceName; input: Record<string, unknown> }
  | { decision: 'answer' }
  | {
      decision: 'refuse';
      code:
        | 'unknown_action'
        | 'invalid_arguments'
        | 'not_verified'
        | 'needs_confirmation'
        | 'not_offered'
        | 'verification_locked';
      reason: string;
      intent?: Intent;
      /** invalid_arguments: the proposal and the arguments that were missing or malformed, for a specific re-ask. */
      invalid?: { name: string; fields: Array<{ path: string; missing: boolean }> };
    };

/**
 * The choices each state offers (besides the tools every state offers). A verified caller may
 * always start something else (a new visit here; cancelling, rescheduling or a person through the
 * tools): what was pending is dropped, so a later yes can only confirm what was last asked. Every
 * state takes the repairs people make (decision 005): a correction picks again among what was
 * offered, "cancel that" declines what is pending, an unclear request is clarified, and a request
 * no tool carries out (a refund, a same-day visit) is named as such, never taken for another.
 */
export function choicesFor(dialog: Pick<Dialog, 'state' | 'customerId' | 'purpose' | 'pendingIntent'>): ChoiceName[] {
  // Before verification a request can only be noted: it is acted on once the caller is verified.
  const start: ChoiceName = dialog.customerId === null ? 'note_intent' : 'schedule_new_visit';
  return [...answersIn(dialog), start, 'clarify_intent', 'unsupported_request'];
}

/** What the state is waiting for the caller to answer, corrections of an earlier pick included. */
function answersIn(dialog: Pick<Dialog, 'state' | 'purpose' | 'pendingIntent'>): ChoiceName[] {
  switch (dialog.state) {
    case 'PendingCancellationConfirmation':
      return ['confirm', 'select_appointment', 'decline'];
    case 'PendingRescheduleConfirmation':
      return ['confirm', 'select_slot', 'select_appointment', 'decline'];
    case 'PendingScheduleConfirmation':
      return ['confirm', 'select_slot', 'decline'];
    case 'PendingEscalationConfirmation':
      return ['confirm', 'callback_number', 'decline'];
    // "No, never mind" to a list or to the address question is an answer too: nothing changes.
    case 'PresentingAppointments':
      return ['select_appointment', 'decline'];
    case 'PresentingSlots':
      return dialog.purpose === 'reschedule'
        ? ['select_slot', 'select_appointment', 'decline']
        : ['select_slot', 'decline'];
    case 'PendingScheduleDetails':
      return ['confirm_address', 'decline'];
    case 'DisambiguatingIntent':
      return ['pick_intent', 'decline'];
    case 'CollectingVerification':
      return dialog.pendingIntent ? ['decline'] : [];
    default:
      return [];
  }
}

/** The policy gate: checks a proposal against the dialog before anything runs. Pure. */
export function gate(dialog: Dialog, plan: ActionPlan): GateDecision {
  if (plan.kind === 'answer') return { decision: 'answer' };
  const args = plan.arguments ?? {};
  if (plan.name in CHOICES) {
    const choice = plan.name as ChoiceName;
    if (!choicesFor(dialog).includes(choice))
      return { decision: 'refuse', code: 'not_offered', reason: `${choice} is not a choice in ${dialog.state}` };
    const parsed = CHOICES[choice].safeParse(args, { reportInput: true });
    if (!parsed.success) return invalid(choice, parsed.error);
    return { decision: 'choice', choice, input: parsed.data };
  }
  const tool = deskTool(plan.name);
  if (!tool) return { decision: 'refuse', code: 'unknown_action', reason: `there is no tool named ${plan.name}` };
  const parsed = tool.input.safeParse(args, { reportInput: true });
  if (!parsed.success) return invalid(tool.name, parsed.error);
  if (tool.customerScoped && dialog.customerId === null) {
    return {
      decision: 'refuse',
      code: 'not_verified',
      reason: `${tool.name} needs a verified caller`,
      ...intentOf(tool.name),
    };
  }
  // Side effects never run from a proposal: the options are shown and a yes collected first.
  if (tool.sideEffect)
    return {
      decision: 'refuse',
      code: 'needs_confirmation',
      reason: `${tool.name} needs the options shown and an explicit yes`,
      ...intentOf(tool.name),
    };
  if (tool.name === 'verify_account' && dialog.customerId !== null)
    return { decision: 'refuse', code: 'not_offered', reason: 'the caller is already verified' };
  if (tool.name === 'verify_account' && verificationLocked(dialog))
    return {
      decision: 'refuse',
      code: 'verification_locked',
      reason: 'too many failed verifications in this conversation',
    };
  return { decision: 'run', tool, input: parsed.data };
}

/** Arguments missing or malformed: named, so the caller can be asked for the one that was wrong. */
function invalid(name: string, error: z.ZodError): GateDecision {
  const fields = error.issues.map((issue) => ({
    path: issue.path.join('.'),
    missing: issue.code === 'invalid_type' && issue.input === undefined,
  }));
  return {
    decision: 'refuse',
    code: 'invalid_arguments',
    reason: `${name}: ${describeIssues(error)}`,
    invalid: { name, fields },
  };
}

/** The intent behind a refused tool, so the flow can take the proper path to it. */
function intentOf(name: string): { intent?: Intent } {
  const intents: Record<string, Intent> = {
    cancel_appointment: 'cancel',
    reschedule_appointment: 'reschedule',
    create_appointment: 'schedule',
    list_appointments: 'list_appointments',
    get_available_slots: 'schedule',
    open_invoices: 'billing',
  };
  return intents[name] ? { intent: intents[name] } : {};
}
