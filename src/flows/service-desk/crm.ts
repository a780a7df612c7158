import { z } from 'zod';

/**
 * The CRM the service desk works against: customers, appointments, open slots, invoices and
 * escalation tickets. A port, so the flow runs on the demo CRM (our own tables, seeded) offline
 * and on a real one in production. Customer-scoped operations take the verified customer's id
 * and refuse another customer's records.
 */
export const customerSchema = z.object({
  id: z.string(),
  name: z.string(),
  phone: z.string(),
  zip: z.string(),
  address: z.string(),
});
export type Customer = z.infer<typeof customerSchema>;

export const APPOINTMENT_STATUSES = ['scheduled', 'cancelled', 'completed'] as const;
export const appointmentSchema = z.object({
  id: z.string(),
  customerId: z.string(),
  service: z.string(),
  /** The local date of the visit, YYYY-MM-DD. */
  date: z.string(),
  /** The arrival window, HH:MM. */
  windowStart: z.string(),
  windowEnd: z.string(),
  status: z.enum(APPOINTMENT_STATUSES),
  address: z.string(),
  notes: z.string().nullable(),
});
export type Appointment = z.infer<typeof appointmentSchema>;

export const slotSchema = z.object({
  id: z.string(),
  date: z.string(),
  windowStart: z.string(),
  windowEnd: z.string(),
});
export type Slot = z.infer<typeof slotSchema>;

export const invoiceSchema = z.object({
  id: z.string(),
  customerId: z.string(),
  amountCents: z.number().int(),
  currency: z.string(),
  dueDate: z.string(),
  status: z.enum(['open', 'paid']),
});
export type Invoice = z.infer<typeof invoiceSchema>;

/**
 * Why the CRM refused a change (nothing changed): `not_available`, the window was taken;
 * `overlaps`, the customer already has an appointment in that window; `not_scheduled`, the
 * appointment was cancelled or done meanwhile.
 */
export class CrmError extends Error {
  readonly code: 'not_found' | 'not_yours' | 'not_available' | 'not_scheduled' | 'overlaps';
  constructor(code: CrmError['code'], message: string) {
    super(message);
    this.name = 'CrmError';
    this.code = code;
  }
}

export interface Crm {
  /** Every customer with this E.164 phone number (a household may share one). */
  findCustomersByPhone(phone: string): Promise<Customer[]>;
  getCustomer(id: string): Promise<Customer | undefined>;
  /** Scheduled appointments on or after `fromDate` (YYYY-MM-DD), soonest first. */
  upcomingAppointments(customerId: string, fromDate: string, limit: number): Promise<Appointment[]>;
  /**
   * Free slots from `fromDate` to `toDate` inclusive, soonest first; with `freeFor`, only those
   * overlapping none of that customer's scheduled appointments.
   */
  availableSlots(fromDate: string, toDate: string, limit: number, options?: { freeFor?: string }): Promise<Slot[]>;
  /** Throws `CrmError` unless the appointment is the customer's and scheduled. */
  cancelAppointment(customerId: string, appointmentId: string): Promise<Appointment>;
  /**
   * Moves the appointment to the slot (which stops being free); the old window becomes free again.
   * `CrmError` `overlaps` when the customer has another appointment in that window.
   */
  rescheduleAppointment(customerId: string, appointmentId: string, slotId: string): Promise<Appointment>;
  /** `CrmError` `not_available` when the slot was taken, `overlaps` when the customer has an appointment then. */
  createAppointment(customerId: string, slotId: string, notes: string | null): Promise<Appointment>;
  openInvoices(customerId: string): Promise<Invoice[]>;
  /** A ticket for a person to call the caller back; returns its id. */
  createTicket(ticket: NewTicket): Promise<{ id: string }>;
}

export interface NewTicket {
  /** The verified customer, or null. */
  customerId: string | null;
  reason: string;
  /** The conversation it was opened in: what the caller said. */
  conversationId: string;
  /** E.164: the number a person calls back. */
  phone: string;
  /** The server's clock (virtual with `CLOCK=virtual`), never the wall clock. */
  createdAt: Date;
}
