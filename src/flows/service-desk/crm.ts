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

export class CrmError extends Error {
  readonly code: 'not_found' | 'not_yours' | 'not_available' | 'not_scheduled';
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
  /** Free slots from `fromDate` to `toDate` inclusive, soonest first. */
  availableSlots(fromDate: string, toDate: string, limit: number): Promise<Slot[]>;
  /** Throws `CrmError` unless the appointment is the customer's and scheduled. */
  cancelAppointment(customerId: string, appointmentId: string): Promise<Appointment>;
  /** Moves the appointment to the slot (which stops being free); the old window becomes free again. */
  rescheduleAppointment(customerId: string, appointmentId: string, slotId: string): Promise<Appointment>;
  createAppointment(customerId: string, slotId: string, notes: string | null): Promise<Appointment>;
  openInvoices(customerId: string): Promise<Invoice[]>;
  /** A ticket for a human to call back; returns its id. */
  createTicket(customerId: string | null, reason: string): Promise<{ id: string }>;
}
