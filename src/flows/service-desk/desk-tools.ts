import { z } from 'zod';
import { appointmentSchema, CrmError, invoiceSchema, slotSchema, type Crm } from './crm.ts';
import { canonicalPhone, type PhoneRegion } from '../../core/phone.ts';
import { spokenDigits } from '../../core/spoken-digits.ts';
import { INTENTS } from './dialog.ts';

/**
 * The service desk's tools, each with an input and an output schema. Customer-scoped tools take
 * the customer from the verified dialog (`customerId`), never from the model's arguments; side
 * effects (cancel, reschedule, create) run only from a confirmation, with ids from the dialog.
 */
export interface DeskToolContext {
  crm: Crm;
  /** The verified customer, or null. */
  customerId: string | null;
  /** Today's date where the business is, YYYY-MM-DD. */
  today: string;
  /**
   * The caller's number when the channel told us (WhatsApp, SMS): verification uses it if the
   * caller does not say one.
   */
  callerPhone?: string | null;
  /** National-format numbers are read in this region (`DEFAULT_PHONE_REGION`). */
  phoneRegion?: PhoneRegion | undefined;
  /** A ticket's: the conversation it is opened in, the number a person calls back, and the server's time. */
  ticket?: { conversationId: string; phone: string; now: Date };
}

export interface DeskTool<I extends z.ZodType = z.ZodType, O extends z.ZodType = z.ZodType> {
  name: string;
  description: string;
  input: I;
  output: O;
  /** Needs a verified customer. */
  customerScoped: boolean;
  /** Changes the CRM: only ever run from a confirmation state after an explicit yes. */
  sideEffect: boolean;
  run(input: z.output<I>, context: DeskToolContext): Promise<z.output<O>>;
}

const tool = <I extends z.ZodType, O extends z.ZodType>(definition: DeskTool<I, O>): DeskTool<I, O> => definition;
const addDays = (date: string, days: number) =>
  new Date(Date.parse(`${date}T00:00:00Z`) + days * 86_400_000).toISOString().slice(0, 10);
const customerOf = (context: DeskToolContext) => {
  if (!context.customerId) throw new CrmError('not_found', 'no verified customer');
  return context.customerId;
};

export const verifyAccount = tool({
  name: 'verify_account',
  description: 'Verify the caller with the phone number on the account and its 5-digit ZIP code.',
  input: z.object({
    phone: z
      .string()
      .max(120)
      .optional()
      .describe('The phone number on the account as the caller gave it (any format, digits may be spoken words)'),
    // As models pass it: a number, spoken digits, ZIP+4; a ZIP code that is not 5 digits is asked for again.
    zip: z.preprocess(
      (value) =>
        typeof value === 'number' ? String(value) : typeof value === 'string' ? spokenDigits(value).trim() : value,
      z
        .string()
        .regex(/^\d{5}(?:-?\d{4})?$/, 'must be exactly 5 digits')
        .transform((zip) => zip.slice(0, 5)),
    ),
    intent: z.enum(INTENTS).optional().describe('What the caller wants, if they said'),
  }),
  output: z.object({
    verified: z.boolean(),
    customerId: z.string().nullable(),
    customerName: z.string().nullable(),
    reason: z.enum(['ok', 'unknown_phone', 'zip_mismatch', 'no_phone']),
  }),
  customerScoped: false,
  sideEffect: false,
  async run(input, context) {
    const given = input.phone ?? context.callerPhone ?? null;
    // However the caller gave it: typed national, dashed, bracketed, or spoken digit by digit.
    const phone = given ? canonicalPhone(spokenDigits(given), context.phoneRegion) : null;
    if (!phone) return { verified: false, customerId: null, customerName: null, reason: 'no_phone' as const };
    const candidates = await context.crm.findCustomersByPhone(phone);
    if (candidates.length === 0)
      return { verified: false, customerId: null, customerName: null, reason: 'unknown_phone' as const };
    // A shared phone: the ZIP picks the customer.
    const match = candidates.find((customer) => customer.zip === input.zip);
    if (!match) return { verified: false, customerId: null, customerName: null, reason: 'zip_mismatch' as const };
    return { verified: true, customerId: match.id, customerName: match.name, reason: 'ok' as const };
  },
});

export const lookupAccount = tool({
  name: 'lookup_account',
  description: "The verified customer's name and the service address on file.",
  input: z.object({}),
  output: z.object({ name: z.string(), address: z.string() }),
  customerScoped: true,
  sideEffect: false,
  async run(_input, context) {
    const customer = await context.crm.getCustomer(customerOf(context));
    if (!customer) throw new CrmError('not_found', 'the verified customer no longer exists');
    return { name: customer.name, address: customer.address };
  },
});

export const listAppointments = tool({
  name: 'list_appointments',
  description:
    "List the verified customer's upcoming appointments (to answer, or to pick one to cancel or reschedule).",
  input: z.object({
    limit: z.number().int().min(1).max(10).default(3),
    purpose: z.enum(['info', 'cancel', 'reschedule']).default('info'),
  }),
  output: z.object({ appointments: z.array(appointmentSchema) }),
  customerScoped: true,
  sideEffect: false,
  run: async (input, context) => ({
    appointments: await context.crm.upcomingAppointments(customerOf(context), context.today, input.limit),
  }),
});

export const getAvailableSlots = tool({
  name: 'get_available_slots',
  description:
    'Open appointment windows, for scheduling a new visit or moving one (never one overlapping an appointment the ' +
    'caller already has).',
  input: z.object({
    daysAhead: z.number().int().min(1).max(60).default(14),
    limit: z.number().int().min(1).max(10).default(5),
  }),
  output: z.object({ slots: z.array(slotSchema) }),
  customerScoped: true,
  sideEffect: false,
  // A window the caller already has a visit in is no window for them (nor for moving that visit to).
  run: async (input, context) => ({
    slots: await context.crm.availableSlots(
      addDays(context.today, 1),
      addDays(context.today, input.daysAhead),
      input.limit,
      { freeFor: customerOf(context) },
    ),
  }),
});

export const cancelAppointment = tool({
  name: 'cancel_appointment',
  description: 'Cancel an appointment (only after the caller chose it and said yes).',
  input: z.object({ appointmentId: z.string().min(1).max(100) }),
  output: z.object({ appointment: appointmentSchema }),
  customerScoped: true,
  sideEffect: true,
  run: async (input, context) => ({
    appointment: await context.crm.cancelAppointment(customerOf(context), input.appointmentId),
  }),
});

export const rescheduleAppointment = tool({
  name: 'reschedule_appointment',
  description: 'Move an appointment to an open window (only after the caller chose both and said yes).',
  input: z.object({ appointmentId: z.string().min(1).max(100), slotId: z.string().min(1).max(100) }),
  output: z.object({ appointment: appointmentSchema }),
  customerScoped: true,
  sideEffect: true,
  run: async (input, context) => ({
    appointment: await context.crm.rescheduleAppointment(customerOf(context), input.appointmentId, input.slotId),
  }),
});

export const createAppointment = tool({
  name: 'create_appointment',
  description: 'Book a new visit at the address on file (only after the caller chose a window and said yes).',
  input: z.object({ slotId: z.string().min(1).max(100), notes: z.string().max(500).nullable().default(null) }),
  output: z.object({ appointment: appointmentSchema }),
  customerScoped: true,
  sideEffect: true,
  run: async (input, context) => ({
    appointment: await context.crm.createAppointment(customerOf(context), input.slotId, input.notes),
  }),
});

export const openInvoices = tool({
  name: 'open_invoices',
  description: "The verified customer's unpaid invoices.",
  input: z.object({}),
  output: z.object({ invoices: z.array(invoiceSchema) }),
  customerScoped: true,
  sideEffect: false,
  run: async (_input, context) => ({ invoices: await context.crm.openInvoices(customerOf(context)) }),
});

const POLICIES = {
  cancellation: 'Appointments can be cancelled free of charge up to 24 hours before the arrival window.',
  rescheduling: 'Appointments can be moved to any open window in the next 60 days at no cost.',
  billing: 'Invoices are due 14 days after the visit; card and bank transfer are accepted.',
  service_area: 'We serve the San Francisco Bay Area and New York City.',
  preparation: 'Please clear access to baseboards and keep pets away from treated areas for two hours.',
} as const;

export const servicePolicy = tool({
  name: 'service_policy',
  description: 'Our policy on cancellation, rescheduling, billing, service area or visit preparation.',
  input: z.object({ topic: z.enum(Object.keys(POLICIES) as [keyof typeof POLICIES, ...Array<keyof typeof POLICIES>]) }),
  output: z.object({ policy: z.string() }),
  customerScoped: false,
  sideEffect: false,
  run: async (input) => ({ policy: POLICIES[input.topic] }),
});

export const escalate = tool({
  name: 'escalate',
  description:
    'Hand the caller to a person: opens a ticket for our team to call them back (the caller is asked for a ' +
    'number when none is known) and returns its id.',
  input: z.object({ reason: z.string().min(1).max(500) }),
  output: z.object({ ticketId: z.string() }),
  customerScoped: false,
  sideEffect: false,
  async run(input, context) {
    // Only ever with a number to call back: a ticket nobody can act on would be a promise not kept.
    if (!context.ticket) throw new Error('a ticket needs the conversation and a phone number to call back');
    const { conversationId, phone, now } = context.ticket;
    const ticket = await context.crm.createTicket({
      customerId: context.customerId,
      reason: input.reason,
      conversationId,
      phone,
      createdAt: now,
    });
    return { ticketId: ticket.id };
  },
});

export const DESK_TOOLS: ReadonlyArray<DeskTool> = [
  verifyAccount,
  lookupAccount,
  listAppointments,
  getAvailableSlots,
  cancelAppointment,
  rescheduleAppointment,
  createAppointment,
  openInvoices,
  servicePolicy,
  escalate,
];
export const deskTool = (name: string): DeskTool | undefined => DESK_TOOLS.find((candidate) => candidate.name === name);
